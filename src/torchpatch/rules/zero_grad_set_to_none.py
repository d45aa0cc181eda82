"""TP904 (opt-in): `zero_grad(set_to_none=False)` writes zeros into every gradient instead of freeing it."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v


class ZeroGradSetToNone(Rule):
    """
    ## What it does
    Flags `.zero_grad(set_to_none=False)` (on optimizers and modules; a literal `False`, by keyword
    or as the only positional argument). Opt-in: enable it with `--extend-select TP904` (or
    `--select TOR402`).

    ## Why is this bad?
    Since PyTorch 2.0 `zero_grad()` sets gradients to `None` by default, which frees their memory and
    skips a write per parameter; `set_to_none=False` restores the older, slower behaviour (a memset
    kernel per gradient). Keep it only where code reads `.grad` between steps and needs zeros there.
    No fix: with `None` gradients such code behaves differently.
    """

    code = "TP904"
    name = "zero-grad-set-to-none"
    summary = "`zero_grad(set_to_none=False)` (zeros every gradient instead of freeing it)"
    changed_in = v("2.4")  # not a release change: 2.4 is the oldest release this hint is checked against
    opt_in = True
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",)
    torchfix_codes = ("TOR402",)
    methods = frozenset({"zero_grad"})

    VALID = [
        "import torch\noptimizer.zero_grad()\n",
        "import torch\noptimizer.zero_grad(set_to_none=True)\n",
        "import torch\noptimizer.zero_grad(set_to_none=flag)\n",
    ]
    INVALID = [
        Invalid("import torch\noptimizer.zero_grad(set_to_none=False)\n"),
        Invalid("import torch\nmodel.zero_grad(False)\n"),
    ]

    def check_method_call(self, ctx, call):
        value = keyword(call, "set_to_none")
        node = value.value if value is not None else (call.args[0] if len(call.args) == 1 and not call.keywords
                                                      else None)
        if isinstance(node, ast.Constant) and node.value is False:
            yield ctx.diagnostic(call, "`zero_grad(set_to_none=False)` writes zeros into every gradient; the default "
                                       "(`set_to_none=True`, since PyTorch 2.0) frees them")
