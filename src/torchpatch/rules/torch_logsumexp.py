"""TP903 (opt-in): torch.log(torch.sum(torch.exp(x), dim)) -> torch.logsumexp(x, dim)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import argument, has_starred
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v


def _assigned_value(ctx, name: ast.Name) -> ast.expr | None:
    """The value of the one plain assignment to ``name`` in the function (or module) around it."""
    scope = ctx.parent_of(name)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = ctx.parent_of(scope)
    if scope is None:
        return None
    values = [node.value for node in ast.walk(scope) if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets)]
    binds = [node for node in ast.walk(scope) if isinstance(node, ast.Name) and node.id == name.id
             and isinstance(node.ctx, ast.Store)]
    return values[0] if len(values) == 1 and len(binds) == 1 else None


def _adds_back_its_shift(ctx, call: ast.Call, exp_argument: ast.expr) -> bool:
    """``m + log(sum(exp(x - m)))`` (or the shifted value held in a local name): the stable
    log-sum-exp written out, the form `torch.logsumexp` computes itself; exp does not overflow there
    when ``m`` is the maximum, so the finding's claim would be wrong."""
    shifted = _assigned_value(ctx, exp_argument) if isinstance(exp_argument, ast.Name) else exp_argument
    if not (isinstance(shifted, ast.BinOp) and isinstance(shifted.op, ast.Sub)):
        return False
    total = ctx.parent_of(call)
    if not (isinstance(total, ast.BinOp) and isinstance(total.op, ast.Add)):
        return False
    other = total.right if total.left is call else total.left
    return ast.dump(other) == ast.dump(shifted.right)


class TorchLogsumexp(Rule):
    """
    ## What it does
    Flags `torch.log(torch.sum(torch.exp(x), dim))` and offers `torch.logsumexp(x, dim)`. Only a sum
    over given dimensions is flagged: `torch.logsumexp` needs `dim`, and `dim=None` means something
    else there (pytorch/pytorch#144339). Opt-in: enable it with `--extend-select TP903` (or
    `--select TOR108`).

    ## Why is this bad?
    `torch.exp(x)` overflows to `inf` for `x` above about 88 in float32 (and underflows to 0 for very
    negative `x`), so the composed expression returns `inf` or `-inf` where the true value is finite;
    `torch.logsumexp` subtracts the maximum first. It exists in every release 2.4 … 2.15.
    The stable form written out, `m + torch.log(torch.sum(torch.exp(x - m), dim))` (the shifted
    value may be a local name), is not flagged: it does not overflow when `m` is the maximum.

    The fix is unsafe only because the values change in the last bits (and become finite where the
    composed form overflowed).
    """

    code = "TP903"
    name = "torch-logsumexp"
    summary = "`torch.log(torch.sum(torch.exp(x), dim))` -> `torch.logsumexp(x, dim)` (overflow)"
    changed_in = v("2.4")  # not a release change: 2.4 is the oldest release this hint is checked against
    opt_in = True
    fix_safety = UNSAFE
    fix_safety_note = "Values change in the last bits, and become finite where `exp` overflowed."
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.logsumexp.html",)
    torchfix_codes = ("TOR108",)
    calls = frozenset({"torch.log"})

    VALID = [
        "import torch\ny = torch.logsumexp(x, 1)\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x), 1) + 2.5)\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x) + 2.5, 1))\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x), dim=None, keepdim=True))\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x)))\n",
        "import torch\nimport numpy as np\ny = torch.log(np.sum(np.exp(x), 1))\n",
        "import torch\ny = m + torch.log(torch.sum(torch.exp(x - m), 1))\n",
    ]
    INVALID = [
        Invalid("import torch\ny = torch.log(torch.sum(torch.exp(x), 1, keepdim=True))\n",
                fixed="import torch\ny = torch.logsumexp(x, 1, keepdim=True)\n"),
        Invalid("import torch as th\ny = th.log(th.sum(th.exp(2.5 + x), dim=-1))\n",
                fixed="import torch as th\ny = th.logsumexp(2.5 + x, dim=-1)\n"),
        # Shifted by hand but the shift not added back here: its own message (no overflow claim).
        Invalid("import torch\ny = torch.log(torch.sum(torch.exp(x - x_max), 1, keepdim=True))\n",
                fixed="import torch\ny = torch.logsumexp(x - x_max, 1, keepdim=True)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if len(call.args) != 1 or call.keywords or has_starred(call):
            return
        total = call.args[0]
        if not isinstance(total, ast.Call) or ctx.resolves_to(total.func) != "torch.sum" or has_starred(total) \
                or not total.args:
            return
        inner = total.args[0]
        if not isinstance(inner, ast.Call) or ctx.resolves_to(inner.func) != "torch.exp" or len(inner.args) != 1 \
                or inner.keywords:
            return
        dim = argument(total, "dim", 1)
        if dim is None or isinstance(dim[1], ast.Constant) and dim[1].value is None:
            return
        if _adds_back_its_shift(ctx, call, inner.args[0]):
            return
        fix = None
        if all(k.arg in ("dim", "keepdim") for k in total.keywords) and len(total.args) <= 3:
            name, import_edits = ctx.name_for("torch.logsumexp")
            rest = [ctx.source(a) for a in total.args[1:]] + [f"{k.arg}={ctx.source(k.value)}" for k in total.keywords]
            text = f"{name}({', '.join([ctx.source(inner.args[0]), *rest])})"
            fix = Fix("Replace with `torch.logsumexp`", [*import_edits, Edit(ctx.start(call), ctx.end(call), text)],
                      UNSAFE)
        if isinstance(inner.args[0], ast.BinOp) and isinstance(inner.args[0].op, ast.Sub):
            # ``exp(x - x_max)``: already shifted by hand, so "overflows" would be false; a shift by one
            # global maximum can still underflow whole slices to log(0).
            message = ("`torch.log(torch.sum(torch.exp(x - m), dim))` is a hand-shifted log-sum-exp; "
                       "`torch.logsumexp(x, dim)` subtracts each slice's own maximum, so no slice underflows "
                       "to `-inf` (in every PyTorch release 2.4 through 2.15)")
        else:
            message = ("`torch.log(torch.sum(torch.exp(x), dim))` overflows for large x; use "
                       "`torch.logsumexp(x, dim)` (in every PyTorch release 2.4 through 2.15)")
        yield ctx.diagnostic(call, message, fix)
