"""TP113: `ExportedProgram.run_decompositions(_preserve_ops=...)`, removed in PyTorch 2.6."""

from __future__ import annotations

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_METHOD = "run_decompositions"


class RunDecompositionsPreserveOps(Rule):
    """
    ## What it does
    Flags `.run_decompositions(..., _preserve_ops=...)`, the `torch.export.ExportedProgram` method
    called with its private keyword. The keyword is what identifies the call: any receiver is
    checked, except one that resolves to a name outside torch.

    ## Why is this bad?
    In PyTorch 2.4 and 2.5 `ExportedProgram.run_decompositions(decomp_table=None, _preserve_ops=())`
    kept the listed operators out of the decomposition. PyTorch 2.6 removed the keyword (the 2.6.0
    wheel's signature is `run_decompositions(self, decomp_table=None)`), so the call raises
    `TypeError: run_decompositions() got an unexpected keyword argument '_preserve_ops'`. From 2.6
    the table says what is decomposed: `table = torch.export.default_decompositions()` (new in 2.6),
    `del table[op]` for each operator to keep, then `ep.run_decompositions(table)`.
    """

    code = "TP113"
    name = "run-decompositions-preserve-ops"
    summary = "`ep.run_decompositions(_preserve_ops=...)` (removed in 2.6; delete the ops from `default_decompositions()`)"
    removed_in = v("2.6")
    replacement_since = v("2.6")
    fix_safety_note = (
        "No fix: the replacement builds a decomposition table in statements of its own, and "
        "`torch.export.default_decompositions()` does not exist before 2.6."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/export.html#torch.export.ExportedProgram.run_decompositions",
    )
    catalog_ids = ("export.run-decomp-preserve-ops",)
    methods = frozenset({_METHOD})

    VALID = [
        "import torch\ntable = torch.export.default_decompositions()\ndel table[torch.ops.aten.linear.default]\n"
        "ep = ep.run_decompositions(table)\n",
        "import torch\nep = torch.export.export(model, (x,), strict=False).run_decompositions()\n",
        Valid("import torch\nep = ep.run_decompositions(_preserve_ops=(torch.ops.aten.linear.default,))\n",
              target_torch="2.5"),
    ]
    INVALID = [
        Invalid("import torch\nep = torch.export.export(model, (x,), strict=False)\n"
                "ep = ep.run_decompositions(_preserve_ops=(torch.ops.aten.linear.default,))\n"),
        Invalid("import torch\ndef lower(ep, table):\n    return ep.run_decompositions(table, _preserve_ops=KEEP)\n"),
    ]

    def check_method_call(self, ctx, call):
        argument = keyword(call, "_preserve_ops")
        if argument is None:
            return
        receiver = ctx.resolves_to(call.func.value)
        if receiver is not None and receiver.split(".")[0] != "torch":
            return
        yield ctx.diagnostic(argument, (
            f"`run_decompositions(_preserve_ops=...)` was removed in PyTorch {self.removed_in} (TypeError); "
            "delete the ops from `torch.export.default_decompositions()` and pass that table"))
