"""TP252: torch.norm (deprecated, unmaintained) -> torch.linalg.vector_norm / matrix_norm."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args, keyword, literal, remove_argument, replace_node
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: torch.norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None)
_POSITIONS = {"input": 0, "p": 1, "dim": 2, "keepdim": 3, "out": 4, "dtype": 5}


class TorchNorm(Rule):
    """
    ## What it does
    Flags calls to `torch.norm` and, for vector norms (`p` a number, `"fro"` or omitted), rewrites
    them to `torch.linalg.vector_norm`.

    ## Why is this bad?
    `torch.norm` has been documented as deprecated since PyTorch 1.7, when `torch.linalg` arrived:
    "torch.norm is deprecated and may be removed in a future PyTorch release. Its documentation and
    behavior may be incorrect, and it is no longer actively maintained." (still so in 2.13; it does
    not warn at run time). Use `torch.linalg.vector_norm` for vector norms and
    `torch.linalg.matrix_norm` for matrix norms (`"nuc"`, or `"fro"` over two dimensions).

    For a strided tensor on CPU, CUDA or meta (and XPU in 2.13), `torch.norm(x, p, dim, keepdim, dtype=d)` with a
    numeric `p` (or `"fro"`, which is the 2-norm over at most two dimensions) returns
    `torch.linalg.vector_norm(x, p, dim, keepdim, dtype=d)` itself: that is its implementation in
    2.4 and 2.13. The fix writes that call.
    """

    code = "TP252"
    name = "torch-norm"
    summary = "`torch.norm` (documented as deprecated since 1.7) -> `torch.linalg.vector_norm`/`matrix_norm`"
    deprecated_in = v("1.7")
    fix_safety = UNSAFE
    fix_safety_note = (
        "For dense tensors on CPU and CUDA, `torch.norm` calls `torch.linalg.vector_norm` with the same arguments, "
        "so the result is identical; sparse tensors and other devices (MPS) took an older code path in "
        "`torch.norm`, and `vector_norm` also accepts `dim` lists that `p=\"fro\"` rejected."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.norm.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.linalg.vector_norm.html",
    )
    torchfix_codes = ("TOR101", "TOR103")
    calls = frozenset({"torch.norm"})

    VALID = [
        "import torch\nn = torch.linalg.vector_norm(x, dim=-1)\n",
        "import torch\nn = torch.linalg.matrix_norm(A, ord='nuc')\n",
        # Look-alikes: the Tensor method, NumPy's norm, a local function, an nn module.
        "import torch\nn = x.norm(dim=-1)\n",
        "import torch\nimport numpy as np\nn = np.linalg.norm(a)\n",
        "import torch\ndef norm(x):\n    return x\nn = norm(x)\n",
        "import torch\nlayer = torch.nn.LayerNorm(8)\n",
    ]
    INVALID = [
        Invalid("import torch\nn = torch.norm(x)\n", fixed="import torch\nn = torch.linalg.vector_norm(x)\n"),
        Invalid("import torch\nn = torch.norm(x, dim=1, keepdim=True)\n",
                fixed="import torch\nn = torch.linalg.vector_norm(x, dim=1, keepdim=True)\n"),
        # The user's argument form is kept: a keyword stays a keyword (``p`` is ``ord`` in vector_norm).
        Invalid("import torch\nn = torch.norm(x, p=1, dim=-1)\n",
                fixed="import torch\nn = torch.linalg.vector_norm(x, ord=1, dim=-1)\n"),
        Invalid("import torch as th\nn = th.norm(x, 2, 1)\n", fixed="import torch as th\nn = th.linalg.vector_norm(x, 2, 1)\n"),
        Invalid("import torch\nn = torch.norm(x, 'fro', (0, 1))\n",
                fixed="import torch\nn = torch.linalg.vector_norm(x, 2, (0, 1))\n"),
        # A multi-line call keeps its layout.
        Invalid("import torch\nn = torch.norm(\n    x,\n    p=2,\n    dim=-1,  # rows\n)\n",
                fixed="import torch\nn = torch.linalg.vector_norm(\n    x,\n    ord=2,\n    dim=-1,  # rows\n)\n"),
        Invalid("import torch\nn = torch.norm(x, 2, 1, False, None, torch.float64)\n",
                fixed="import torch\nn = torch.linalg.vector_norm(x, 2, 1, False, out=None, dtype=torch.float64)\n"),
        Invalid("import torch\nn = torch.norm(A, p='nuc')\n"),
        Invalid("import torch\nn = torch.norm(x, p=order)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        message = ("`torch.norm` is documented as deprecated since PyTorch 1.7 (unmaintained, still shipped in 2.15); "
                   "use `torch.linalg.vector_norm` or `torch.linalg.matrix_norm`")
        yield ctx.diagnostic(call, message, self._fix(ctx, call))

    def _fix(self, ctx, call):
        """Minimal edits: the callee, and only the arguments whose spelling differs (``p=`` is ``ord=``,
        ``input=`` is ``x=``, ``out``/``dtype`` are keyword-only); the call's layout stays."""
        if has_star_args(call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            return None
        names = list(_POSITIONS)
        if len(call.args) > len(names):
            return None
        arguments: dict[str, ast.AST] = {}
        for index, node in enumerate(call.args):
            arguments[names[index]] = node
        for item in call.keywords:
            if item.arg not in _POSITIONS or item.arg in arguments:
                return None
            arguments[item.arg] = item.value
        if "input" not in arguments:
            return None
        edits: list[Edit] = []
        p = arguments.get("p")
        if p is not None:
            try:
                value = literal(p)
            except (ValueError, TypeError, SyntaxError):
                return None
            if value == "fro":
                dim = arguments.get("dim")
                if dim is not None:
                    try:
                        dims = literal(dim)
                    except (ValueError, TypeError, SyntaxError):
                        return None
                    if isinstance(dims, (tuple, list)) and len(dims) > 2:
                        return None
            elif value is not None and type(value) not in (int, float):
                return None
            p_keyword = keyword(call, "p")
            if value in ("fro", None):  # the 2-norm: vector_norm's default order
                if p_keyword is not None or p is call.args[-1]:
                    edits.append(remove_argument(ctx, call, p_keyword or p))
                else:
                    edits.append(replace_node(ctx, p, "2"))
            elif p_keyword is not None:
                edits.append(_rename_keyword(ctx, p_keyword, "ord"))
        input_keyword = keyword(call, "input")
        if input_keyword is not None:
            edits.append(_rename_keyword(ctx, input_keyword, "x"))
        for name in ("out", "dtype"):  # keyword-only in vector_norm
            index = _POSITIONS[name]
            if index < len(call.args):
                node = call.args[index]
                edits.append(Edit(ctx.start(node), ctx.start(node), f"{name}="))
        name, import_edits = ctx.name_for("torch.linalg.vector_norm", "torch")
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return Fix(message="Replace with `torch.linalg.vector_norm` (the call `torch.norm` makes for dense tensors)",
                   edits=[*import_edits, replace_node(ctx, call.func, name), *edits],
                   applicability=UNSAFE, obsolete_names=(root.id,))


def _rename_keyword(ctx, item: ast.keyword, new: str) -> Edit:
    start = ctx.start(item)
    return Edit(start, start + len(item.arg), new)
