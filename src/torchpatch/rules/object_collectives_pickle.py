"""TP310: object collectives without weights_only= unpickle what other ranks send (opt-in safe mode since 2.14)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import add_keyword, argument, has_double_star, keyword
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: Function -> the position of ``weights_only`` (its last parameter) in src 2.14 torch/distributed/distributed_c10d.py.
WEIGHTS_ONLY_POSITION = {
    "all_gather_object": 3,
    "gather_object": 5,
    "broadcast_object_list": 5,
    "scatter_object_list": 5,
    "send_object_list": 6,
    "recv_object_list": 6,
}
_MODULES = ("torch.distributed", "torch.distributed.distributed_c10d")


class ObjectCollectivesPickle(Rule):
    """
    ## What it does
    Flags the object collectives of `torch.distributed` (`broadcast_object_list`,
    `all_gather_object`, `gather_object`, `scatter_object_list`, `send_object_list`,
    `recv_object_list`) called without `weights_only=`. A call that only sends (`send_object_list`,
    or `gather_object` without an `object_gather_list`, which only a non-destination rank can make)
    is reported too, since every rank must pass the same value, with a message that says so; so is
    a `broadcast_object_list` or `scatter_object_list` in the source rank's own branch
    (`if rank == src:` with `rank = dist.get_rank(...)`, or `if dist.get_rank() == src:`), which
    sends what the other ranks unpickle.

    ## Why is this bad?
    These functions pickle Python objects on one rank and unpickle them on the others with the
    full `pickle` module: a compromised or malicious peer (or anything that can inject traffic
    into the process group) can run arbitrary code on every rank that receives its objects.
    PyTorch 2.14 added `weights_only=` to all six (default `False`, the old behaviour): with
    `weights_only=True` objects are serialized with `torch.save` and read back with
    `torch.load(weights_only=True)`, which accepts only tensors, primitive containers and
    allowlisted types.

    There is no safe automatic fix. Every rank of a collective must pass the same value (a sender
    with `weights_only=True` and a receiver without it cannot understand each other), the objects
    must be loadable by the weights-only unpickler (allowlist your own classes with
    `torch.serialization.add_safe_globals`), and the keyword does not exist before 2.14. When your
    minimum is 2.14 or later, an unsafe fix adds `weights_only=True`; otherwise the finding only
    reports the risk. Explicit `weights_only=False` is not reported.
    """

    code = "TP310"
    name = "object-collectives-pickle"
    summary = "Object collectives without `weights_only=` unpickle peers' data (`weights_only=True` since 2.14)"
    changed_in = v("2.14")
    replacement_since = v("2.14")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Only offered when your minimum is 2.14 (the keyword is a TypeError before). Every rank taking part must pass "
        "the same value, and the objects must be loadable with `torch.load(weights_only=True)`."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/distributed.html#object-collectives",
        "https://docs.pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )
    catalog_ids = ("sec.object-collectives-weights-only",)
    calls = frozenset(f"{module}.{name}" for module in _MODULES for name in WEIGHTS_ONLY_POSITION)

    VALID = [
        Valid("import torch.distributed as dist\ndist.broadcast_object_list(objects, src=0, weights_only=True)\n",
              min_torch="2.14"),
        "import torch.distributed as dist\ndist.all_gather_object(out, obj, None, False)\n",
        "import torch.distributed as dist\ndist.gather_object(obj, out, dst=0, **options)\n",
        # Look-alikes: tensor collectives, another library, a local helper.
        "import torch.distributed as dist\ndist.broadcast(tensor, src=0)\n",
        "import torch\nfrom accelerate.utils import broadcast_object_list\nbroadcast_object_list(objects)\n",
        "import torch\ndef all_gather_object(out, obj):\n    out[:] = [obj]\nall_gather_object(out, 1)\n",
    ]
    INVALID = [
        Invalid("import torch.distributed as dist\ndist.broadcast_object_list(objects, src=0)\n"),
        Invalid("from torch.distributed import all_gather_object\nall_gather_object(gathered, metrics)\n",
                fixed="from torch.distributed import all_gather_object\nall_gather_object(gathered, metrics, weights_only=True)\n",
                min_torch="2.14"),
        Invalid("import torch\n\ndef share(config):\n    torch.distributed.scatter_object_list(\n        out,\n"
                "        [config] * world,\n        src=0,\n    )\n",
                fixed="import torch\n\ndef share(config):\n    torch.distributed.scatter_object_list(\n        out,\n"
                      "        [config] * world,\n        src=0,\n        weights_only=True,\n    )\n",
                min_torch="2.14"),
    ]

    def check_call(self, ctx, call, qualname):
        function = qualname.rpartition(".")[2]
        if keyword(call, "weights_only") is not None or has_double_star(call):
            return
        if any(isinstance(argument, ast.Starred) for argument in call.args) \
                or len(call.args) > WEIGHTS_ONLY_POSITION[function]:
            return  # passed positionally (or maybe, through *args)
        # What every rank must do, whichever side of the exchange this call is.
        together = (f"`weights_only=True` works only when every rank passes it; PyTorch {self.changed_in} added "
                    f"`weights_only=` (default `False`; `True` on every rank loads only tensors and allowlisted types)")
        if _only_sends(function, call):
            message = (f"`{function}` without `weights_only=`: this call only sends, but the destination rank "
                       f"unpickles what it sends with full `pickle`, and {together}")
        elif _in_source_branch(ctx, function, call):
            message = (f"`{function}` without `weights_only=`: this call is in the source rank's branch, and the other "
                       f"ranks unpickle what it sends with full `pickle`; {together}")
        else:
            message = (f"`{function}` without `weights_only=` unpickles objects from other ranks with full `pickle` "
                       f"(code execution if a peer is compromised); PyTorch {self.changed_in} added `weights_only=` "
                       f"(default `False`; `True` on every rank loads only tensors and allowlisted types)")
        fix = None
        if ctx.min_torch >= self.replacement_since:
            fix = Fix(message="Pass `weights_only=True` (every rank must pass it; objects must be weights-only loadable)",
                      edits=[add_keyword(ctx, call, "weights_only=True")], applicability=UNSAFE)
        else:
            message += f" (your minimum is {ctx.min_torch})"
        yield ctx.diagnostic(call.func, message, fix)


def _only_sends(function: str, call: ast.Call) -> bool:
    """A call that unpickles nothing itself: ``send_object_list``, or ``gather_object`` without an
    ``object_gather_list`` (absent or a literal ``None``), which only a non-destination rank can make
    (the 2.4.1 … 2.15.0 wheels raise ValueError on the destination without one, and send on the others)."""
    if function == "send_object_list":
        return True
    if function != "gather_object":
        return False
    found = argument(call, "object_gather_list", 1)
    return found is None or (type(found[1]) is ast.Constant and found[1].value is None)


def _in_source_branch(ctx, function: str, call: ast.Call) -> bool:
    """A ``broadcast_object_list`` / ``scatter_object_list`` in the body of ``if <rank> == <src>:``, where
    ``<src>`` is the call's own ``src`` argument and ``<rank>`` a ``torch.distributed.get_rank(...)`` call or a
    name the enclosing function binds only to one. In the 2.4.1 and 2.15.0 wheels the source rank of
    ``broadcast_object_list`` unpickles nothing, and that of ``scatter_object_list`` only its own share."""
    if function not in ("broadcast_object_list", "scatter_object_list"):
        return False
    found = argument(call, "src", 1 if function == "broadcast_object_list" else 2)
    if found is None:
        return False
    source = ast.dump(found[1])
    node, parent = call, ctx.parent_of(call)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                          ast.ClassDef, ast.Module)):
        if type(parent) is ast.If and node in parent.body:
            test = parent.test
            if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Eq:
                sides = (test.left, test.comparators[0])
                for this, other in (sides, sides[::-1]):
                    if ast.dump(this) == source and _is_rank(ctx, other, parent):
                        return True
        node, parent = parent, ctx.parent_of(parent)
    return False


def _is_rank(ctx, expression: ast.expr, where: ast.AST) -> bool:
    """``expression`` is this process's rank: a ``get_rank`` call of torch.distributed, or a local name
    whose every binding in the enclosing function is one."""
    if type(expression) is ast.Call:
        return ctx.resolves_to(expression.func) in _GET_RANK
    if type(expression) is not ast.Name:
        return False
    function = where
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = ctx.parent_of(function)
    if function is None or any(parameter.arg == expression.id for parameter in ast.walk(function.args)
                               if type(parameter) is ast.arg):
        return False
    values = []
    for node in ast.walk(function):
        if type(node) is ast.Name and node.id == expression.id and type(node.ctx) is not ast.Load:
            parent = ctx.parent_of(node)
            if type(parent) is not ast.Assign or parent.targets != [node]:
                return False
            values.append(parent.value)
    return bool(values) and all(type(value) is ast.Call and ctx.resolves_to(value.func) in _GET_RANK
                                for value in values)


_GET_RANK = frozenset(f"{module}.get_rank" for module in _MODULES)
