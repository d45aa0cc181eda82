"""TP120: include_paths(cuda=...) / library_paths(cuda=...) became device_type= in PyTorch 2.6."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args, keyword, literal, remove_argument, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule
from torchpatch.versions import v

_FUNCTIONS = ("include_paths", "library_paths")
_MODULE = "torch.utils.cpp_extension"


class CppExtensionPathsCuda(Rule):
    """
    ## What it does
    Flags the `cuda` argument of `torch.utils.cpp_extension.include_paths(...)` and
    `library_paths(...)`, by keyword or as the first positional argument.

    ## Why is this bad?
    Up to PyTorch 2.5 both functions took `cuda: bool = False`. PyTorch 2.6 replaced it with
    `device_type: str = "cpu"` (`"cuda"`, `"xpu"`, ...) without a deprecation period, so
    `include_paths(cuda=True)` raises `TypeError: include_paths() got an unexpected keyword
    argument 'cuda'`, and `include_paths(True)` silently returns the CPU paths (`True` is not
    `"cuda"`): a build script then fails to find the CUDA headers or libraries.

    The fix writes `device_type="cuda"` when your minimum is 2.6 or later. For older minimums
    it passes `"cuda"` positionally instead, which works on every release (2.4 and 2.5 read
    it as a true `cuda` flag). `cuda=False` is the default and is dropped.
    """

    code = "TP120"
    name = "cpp-extension-paths-cuda"
    summary = "`cpp_extension.include_paths/library_paths(cuda=...)` (`device_type=` since 2.6)"
    removed_in = v("2.6")
    replacement_since = v("2.6")
    fix_safety = SAFE
    fix_safety_note = (
        "`cuda=True` becomes `device_type=\"cuda\"` (2.6+) or, for older minimums, a positional `\"cuda\"` that both "
        "signatures accept; `cuda=False` is dropped. A non-literal flag becomes `device_type=\"cuda\" if flag else "
        "\"cpu\"`, unsafe below 2.6 (the keyword does not exist there)."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/cpp_extension.html",
    )
    catalog_ids = ("cpp.include-paths-device-type",)
    calls = frozenset(f"{_MODULE}.{name}" for name in _FUNCTIONS)

    VALID = [
        "from torch.utils.cpp_extension import include_paths\ndirs = include_paths(device_type='cuda')\n",
        "import torch.utils.cpp_extension as ext\ndirs = ext.library_paths()\n",
        "import torch.utils.cpp_extension as ext\ndirs = ext.include_paths('cuda')\n",
        # Look-alikes: setuptools/other helpers with the same names.
        "import torch\nfrom mybuild import include_paths\ndirs = include_paths(cuda=True)\n",
        "import torch\ndef library_paths(cuda=False):\n    return []\nlibrary_paths(cuda=True)\n",
    ]
    INVALID = [
        Invalid("from torch.utils.cpp_extension import include_paths\ndirs = include_paths(cuda=True)\n",
                fixed="from torch.utils.cpp_extension import include_paths\ndirs = include_paths(device_type=\"cuda\")\n",
                min_torch="2.6"),
        Invalid("from torch.utils.cpp_extension import include_paths\ndirs = include_paths(cuda=True)\n",
                fixed="from torch.utils.cpp_extension import include_paths\ndirs = include_paths(\"cuda\")\n"),
        Invalid("import torch.utils.cpp_extension as ext\nlibs = ext.library_paths(True)\n",
                fixed="import torch.utils.cpp_extension as ext\nlibs = ext.library_paths(\"cuda\")\n"),
        Invalid("from torch.utils import cpp_extension\nlibs = cpp_extension.library_paths(cuda=False)\n",
                fixed="from torch.utils import cpp_extension\nlibs = cpp_extension.library_paths()\n"),
        Invalid("from torch.utils.cpp_extension import library_paths\nlibs = library_paths(cuda=with_cuda)\n",
                fixed="from torch.utils.cpp_extension import library_paths\n"
                      "libs = library_paths(device_type=\"cuda\" if with_cuda else \"cpu\")\n"),
    ]

    def check_call(self, ctx, call, qualname):
        function = qualname.rpartition(".")[2]
        argument = keyword(call, "cuda")
        if argument is not None:
            value = argument.value
        elif call.args and not isinstance(call.args[0], ast.Starred) and _is_flag(call.args[0]):
            value = call.args[0]
        else:
            return
        if argument is not None:
            message = (f"`{function}(cuda=...)` was removed in PyTorch {self.removed_in} (TypeError); "
                       f"use `device_type=\"cuda\"`")
        else:
            message = (f"`{function}({ctx.source(value)})`: since PyTorch {self.removed_in} the first parameter is "
                       f"`device_type` (a string), so a bool silently selects the CPU paths; pass `\"cuda\"`")
        yield ctx.diagnostic(argument or value, message, self._fix(ctx, call, argument, value))

    def _fix(self, ctx, call, argument, value):
        node = argument or value
        try:
            flag = literal(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            flag = None
        if isinstance(flag, bool) and not flag:
            return Fix(message="Drop `cuda=False` (CPU paths are the default)", edits=[remove_argument(ctx, call, node)],
                       applicability=SAFE)
        if isinstance(flag, bool):
            only = len(call.args) + len(call.keywords) == 1 and not has_star_args(call)
            if argument is None or only and ctx.min_torch < self.replacement_since:
                # A positional "cuda": a true `cuda` flag for 2.4/2.5, `device_type` from 2.6.
                return Fix(message="Pass `\"cuda\"` positionally (accepted by every release)",
                           edits=[replace_node(ctx, node, '"cuda"')], applicability=SAFE)
            return Fix(message=f"Pass `device_type=\"cuda\"`{ctx.needs_note(self.replacement_since)}",
                       edits=[replace_node(ctx, node, 'device_type="cuda"')],
                       applicability=ctx.applicability(needs=self.replacement_since))
        if argument is None:
            return None  # a positional expression that looks like a flag: review it
        text = f'device_type="cuda" if {_operand(ctx, value)} else "cpu"'
        return Fix(message=f"Pass `device_type=` from the flag{ctx.needs_note(self.replacement_since)}",
                   edits=[replace_node(ctx, node, text)], applicability=ctx.applicability(needs=self.replacement_since))


def _is_flag(node: ast.AST) -> bool:
    """A positional first argument that is a bool (a literal, or a comparison / `not`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    return isinstance(node, ast.Compare) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)


def _operand(ctx, node: ast.AST) -> str:
    """The text of ``node`` as the condition of a conditional expression."""
    text = ctx.source(node)
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        return f"({text})"
    return text
