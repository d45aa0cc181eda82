"""TP443: DTensor `from_local` / `to_local` on a Partial placement: the gradient became Replicate in 2.11."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import enclosing_function
from torchpatch.rules._helpers import argument, keyword
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_PACKAGES = ("torch.distributed.tensor", "torch.distributed._tensor")
_PARTIAL = frozenset({*(f"{package}.Partial" for package in _PACKAGES),
                      *(f"{package}.placement_types.Partial" for package in _PACKAGES)})
_FROM_LOCAL = frozenset({*(f"{package}.DTensor.from_local" for package in _PACKAGES),
                         "torch.distributed.tensor._api.DTensor.from_local"})
_DISTRIBUTE = frozenset(f"{package}.distribute_tensor" for package in _PACKAGES)
#: ``from_local(local_tensor, device_mesh, placements)``; ``distribute_tensor(tensor, device_mesh, placements)``.
_PLACEMENTS = 2


def _has_partial(ctx, node: ast.AST | None) -> bool:
    """A literal list/tuple of placements holding ``Partial()`` (or ``Partial("avg")``)."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return False
    return any(isinstance(element, ast.Call) and ctx.resolves_to(element.func) in _PARTIAL for element in node.elts)


def _partial_producer(ctx, call: ast.Call) -> bool:
    """``DTensor.from_local(t, mesh, [Partial()])``, ``distribute_tensor(...)`` or ``x.redistribute(mesh, [Partial()])``."""
    qualname = ctx.resolves_to(call.func)
    if qualname in _FROM_LOCAL or qualname in _DISTRIBUTE:
        placements = argument(call, "placements", _PLACEMENTS)
        return placements is not None and _has_partial(ctx, placements[1])
    if isinstance(call.func, ast.Attribute) and call.func.attr == "redistribute":
        placements = argument(call, "placements", 1)
        return placements is not None and _has_partial(ctx, placements[1])
    return False


class DtensorPartialGrad(Rule):
    """
    ## What it does
    Flags `DTensor.from_local(t, mesh, [..., Partial(), ...])`, and `.to_local()` without
    `grad_placements=` on a DTensor that the same function built with a literal `Partial()`
    placement (`from_local`, `distribute_tensor` or `.redistribute(mesh, [Partial()])`), when your
    minimum torch is below 2.11 and the target is 2.11 or later.

    ## Why is this bad?
    PyTorch 2.11 changed the placement of the gradient that flows back through these calls
    (`_normalize_placements_for_grad`, src 2.11 `distributed/tensor/_api.py`, which the source
    calls BC-breaking). Before 2.11 a forward `Partial` placement gave a `Partial` gradient: each
    rank's local gradient was its own partial sum. Since 2.11 it becomes `Replicate`: the gradient
    is reduced across the mesh dimension, and every rank holds the full sum. Code that reduces
    those gradients itself now counts them several times, and code that expected the reduced
    gradient was wrong before.

    With `to_local(grad_placements=[Partial()])` (or `[Replicate()]`) the layout is the same on
    every release. `from_local` takes `grad_placements=` only from 2.12 (absent in the 2.11.0
    wheel); on older releases redistribute the gradient where you use it. There is no fix.
    """

    code = "TP443"
    name = "dtensor-partial-grad"
    summary = "`DTensor.from_local`/`to_local` on a `Partial` placement: its gradient became `Replicate` in 2.11"
    changed_in = v("2.11")
    references = ("https://docs.pytorch.org/docs/stable/distributed.tensor.html",)
    catalog_ids = ("dist.dtensor-grad-placements",)
    calls = _FROM_LOCAL
    methods = frozenset({"to_local"})

    VALID = [
        Valid("from torch.distributed.tensor import DTensor, Partial\n"
              "dt = DTensor.from_local(t, mesh, [Partial()], grad_placements=[Partial()])\n", min_torch="2.12"),
        "from torch.distributed.tensor import DTensor, Shard\ndt = DTensor.from_local(t, mesh, [Shard(0)])\nlocal = dt.to_local()\n",
        "from torch.distributed.tensor import DTensor, Partial, Shard\n"
        "dt = DTensor.from_local(t, mesh, [Shard(0)]).redistribute(mesh, [Partial()])\n"
        "local = dt.to_local(grad_placements=[Partial()])\n"
        "def f(dt):\n    return dt.to_local()\n",
        Valid("from torch.distributed.tensor import DTensor, Partial\ndt = DTensor.from_local(t, mesh, [Partial()])\n",
              min_torch="2.11"),
        Valid("from torch.distributed.tensor import DTensor, Partial\ndt = DTensor.from_local(t, mesh, [Partial()])\n",
              target_torch="2.10"),
    ]
    INVALID = [
        Invalid("from torch.distributed.tensor import DTensor, Partial\n"
                "out = DTensor.from_local(partial_sum, mesh, [Partial()])\n"),
        Invalid("import torch.distributed.tensor as dtensor\n\n"
                "def reduce(x, mesh):\n    y = x.redistribute(mesh, [dtensor.Partial()])\n    return y.to_local()\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if not (ctx.min_torch < self.changed_in <= ctx.target):
            return
        placements = argument(call, "placements", _PLACEMENTS)
        if placements is None or not _has_partial(ctx, placements[1]) or keyword(call, "grad_placements"):
            return
        yield ctx.diagnostic(call.func, f"`DTensor.from_local` with a `Partial` placement: the gradient of the local "
                                        f"tensor was `Partial` before PyTorch {self.changed_in} and is `Replicate` "
                                        f"(reduced) since; your minimum is {ctx.min_torch} (`grad_placements=` exists from 2.12)")

    def check_method_call(self, ctx, call):
        if not (ctx.min_torch < self.changed_in <= ctx.target) or call.args or keyword(call, "grad_placements"):
            return
        receiver = call.func.value
        if isinstance(receiver, ast.Call):
            built = _partial_producer(ctx, receiver)
        elif isinstance(receiver, ast.Name):
            built = _assigned_partial(ctx, call, receiver.id)
        else:
            return
        if built:
            yield ctx.diagnostic(call.func, f"`to_local()` on a `Partial` DTensor without `grad_placements=`: the "
                                            f"gradient was `Partial` before PyTorch {self.changed_in} and is "
                                            f"`Replicate` since; pass `grad_placements=` for one layout on every release")


def _assigned_partial(ctx, call: ast.Call, name: str) -> bool:
    """Whether ``name``'s only assignment in the enclosing function builds a Partial DTensor."""
    function = enclosing_function(ctx, call)
    body = function.body if function is not None and not isinstance(function, ast.Lambda) else ctx.tree.body
    assignments = [node for statement in body for node in ast.walk(statement)
                   if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                   and any(isinstance(t, ast.Name) and t.id == name
                           for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    if len(assignments) != 1:
        return False
    value = assignments[0].value
    return isinstance(value, ast.Call) and _partial_producer(ctx, value)
