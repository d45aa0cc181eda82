"""TP233: torch._check_is_size is deprecated since PyTorch 2.11 (use torch._check(i >= 0))."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import root_name
from torchpatch.rules._helpers import has_star_args, keyword, replace_node
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule
from torchpatch.versions import v

#: Operands that need parentheses before ``>= 0`` (their precedence is not above a comparison).
_LOW_PRECEDENCE = (ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom)


class CheckIsSize(Rule):
    """
    ## What it does
    Flags calls to `torch._check_is_size(i)` and rewrites them to `torch._check(i >= 0)`.

    ## Why is this bad?
    PyTorch 2.11 deprecated `torch._check_is_size` (a `FutureWarning`: "_check_is_size will be
    removed in a future PyTorch release along with guard_size_oblivious. Use _check(i >= 0)
    instead."). It runs `torch._check(i >= 0, message)` and then tells the symbolic shape
    machinery that the unbacked value is a size, which only changes the answers of
    `guard_size_oblivious` (deprecated at the same time). In eager mode the two are the same;
    under `torch.compile` / `torch.export` code that relied on size-oblivious reasoning can hit
    a data-dependent guard error after the change, so the fix is unsafe: re-run your export or
    compile tests. Calls with `max=` are reported without a fix (write the two checks yourself,
    not a chained comparison, which guards).
    """

    code = "TP233"
    name = "check-is-size"
    summary = "`torch._check_is_size(i)` (deprecated 2.11; `torch._check(i >= 0)`)"
    deprecated_in = v("2.11")
    replacement_since = v("2.4")
    fix_safety = UNSAFE
    fix_safety_note = (
        "`torch._check(i >= 0)` performs the same check, but no longer marks an unbacked symbolic value as a size, "
        "which `guard_size_oblivious` reasoning used: compiled or exported code can raise data-dependent errors."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch._check.html",
        "https://docs.pytorch.org/docs/stable/export/programming_model.html",
    )
    catalog_ids = ("compile.check-is-size",)
    calls = frozenset({"torch._check_is_size"})

    VALID = [
        "import torch\ntorch._check(n >= 0)\n",
        "import torch\ntorch._check_with(ValueError, n >= 0, lambda: 'negative')\n",
        # Look-alikes: a local helper, a method.
        "import torch\ndef _check_is_size(n):\n    assert n >= 0\n_check_is_size(3)\n",
        "import torch\nclass Shape:\n    def run(self, n):\n        self._check_is_size(n)\n",
    ]
    INVALID = [
        Invalid("import torch\n\ndef f(x):\n    n = x.item()\n    torch._check_is_size(n)\n    return torch.zeros(n)\n",
                fixed="import torch\n\ndef f(x):\n    n = x.item()\n    torch._check(n >= 0)\n    return torch.zeros(n)\n"),
        Invalid("import torch as th\nth._check_is_size(a - b, lambda: 'negative size')\n",
                fixed="import torch as th\nth._check(a - b >= 0, lambda: 'negative size')\n"),
        Invalid("from torch import _check_is_size\n_check_is_size(n if ok else m)\n",
                fixed="import torch\ntorch._check((n if ok else m) >= 0)\n"),
        Invalid("import torch\ntorch._check_is_size(n, max=64)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        message = (f"`torch._check_is_size` is deprecated since PyTorch {self.deprecated_in} (FutureWarning) and "
                   f"goes away with `guard_size_oblivious`; use `torch._check(i >= 0)`")
        yield ctx.diagnostic(call, message, self._fix(ctx, call))

    def _fix(self, ctx, call):
        if has_star_args(call) or not call.args or len(call.args) > 2 or call.keywords \
                and [k.arg for k in call.keywords] != ["message"]:
            return None  # max=, or arguments we cannot see
        if keyword(call, "message") is not None and len(call.args) > 1:
            return None
        value = call.args[0]
        operand = ctx.source(value)
        if isinstance(value, _LOW_PRECEDENCE) or isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
            operand = f"({operand})"
        text, import_edits = ctx.name_for("torch._check")
        edits = [*import_edits, replace_node(ctx, call.func, text), replace_node(ctx, value, f"{operand} >= 0")]
        return Fix(message="Use `torch._check(i >= 0)` (no size hint for `guard_size_oblivious`)", edits=edits,
                   applicability=UNSAFE, obsolete_names=root_name(call.func))
