"""TP238: FSDP2's `set_reduce_scatter_divide_factor` is deprecated since PyTorch 2.8 (`set_gradient_divide_factor`)."""

from __future__ import annotations

import ast

from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_OLD = "set_reduce_scatter_divide_factor"
_NEW = "set_gradient_divide_factor"


class Fsdp2ReduceScatterDivideFactor(Rule):
    """
    ## What it does
    Flags `.set_reduce_scatter_divide_factor(factor)`, the FSDP2 `FSDPModule` method (a model after
    `fully_shard(model)`), and renames it to `.set_gradient_divide_factor(factor)`. The method
    name is FSDP2's alone: any receiver is checked, except one that resolves to a name outside
    torch or a class of the file's own that defines the method.

    ## Why is this bad?
    PyTorch 2.8 renamed the method: in the 2.8.0 … 2.15.0 wheels
    `FSDPModule.set_reduce_scatter_divide_factor` is documented "Use `set_gradient_divide_factor`
    instead" and only calls it. No warning is raised, so nothing tells you before the alias goes.
    """

    code = "TP238"
    name = "fsdp2-reduce-scatter-divide-factor"
    summary = "FSDP2 `set_reduce_scatter_divide_factor` → `set_gradient_divide_factor` (deprecated in 2.8)"
    deprecated_in = v("2.8")
    replacement_since = v("2.8")
    fix_safety = SAFE
    fix_safety_note = (
        "From 2.8 the old method's body is `self.set_gradient_divide_factor(factor)` (2.8.0 … 2.15.0 wheels), so the "
        "rename is identical there; 2.7 has no `set_gradient_divide_factor`, so the fix is unsafe below min-torch 2.8."
    )
    references = ("https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html",)
    catalog_ids = ("dist.fsdp2-divide-factor",)
    methods = frozenset({_OLD})

    VALID = [
        "from torch.distributed.fsdp import fully_shard\nfully_shard(model)\nmodel.set_gradient_divide_factor(2.0)\n",
        Valid("import torch\nmodel.set_reduce_scatter_divide_factor(2.0)\n", target_torch="2.7"),
        "import torch\nclass Wrapper:\n    def set_reduce_scatter_divide_factor(self, f):\n        self.f = f\n"
        "Wrapper().set_reduce_scatter_divide_factor(2.0)\n",
    ]
    INVALID = [
        Invalid("from torch.distributed.fsdp import fully_shard\nfully_shard(model)\n"
                "model.set_reduce_scatter_divide_factor(world_size)\n",
                fixed="from torch.distributed.fsdp import fully_shard\nfully_shard(model)\n"
                      "model.set_gradient_divide_factor(world_size)\n",
                min_torch="2.8"),
        Invalid("import torch\nfor block in model.layers:\n    block.set_reduce_scatter_divide_factor(1.0)\n"),
    ]

    def check_method_call(self, ctx, call):
        if _defines(ctx.tree, _OLD):
            return
        receiver = ctx.resolves_to(call.func.value)
        if receiver is not None and receiver.split(".")[0] != "torch":
            return
        end = ctx.end(call.func)
        fix = Fix(f"Rename to `{_NEW}`{ctx.needs_note(self.replacement_since)}",
                  [Edit(end - len(_OLD), end, _NEW)], ctx.applicability(needs=self.replacement_since))
        yield ctx.diagnostic(call.func, (
            f"`{_OLD}` is deprecated since PyTorch {self.deprecated_in} (documented, no warning); "
            f"use `{_NEW}` (2.8+)"), fix)


def _defines(tree, name: str) -> bool:
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in ast.walk(tree))
