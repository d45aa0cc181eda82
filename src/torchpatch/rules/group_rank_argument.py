"""TP445 (opt-in): `src=get_global_rank(group, r)` in a c10d call → `group_src=r` (2.6+)."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import root_name
from torchpatch.rules._helpers import argument, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_C10D = ("torch.distributed", "torch.distributed.distributed_c10d")
#: name -> (rank keyword, its position, position of ``group``), from the 2.6.0 … 2.15.0 signatures.
_CALLS = {
    "isend": ("dst", 1, 2), "irecv": ("src", 1, 2), "send": ("dst", 1, 2), "recv": ("src", 1, 2),
    "broadcast": ("src", 1, 2), "reduce": ("dst", 1, 3),
    "gather": ("dst", 2, 3), "scatter": ("src", 2, 3),
    "gather_object": ("dst", 2, 3), "scatter_object_list": ("src", 2, 3),
    "send_object_list": ("dst", 1, 2), "recv_object_list": ("src", 1, 2), "broadcast_object_list": ("src", 1, 2),
}
_TRANSLATE = frozenset(f"{module}.{name}" for module in _C10D for name in ("get_global_rank", "_get_global_rank"))


class GroupRankArgument(Rule):
    """
    ## What it does
    Flags c10d calls on a subgroup whose `src`/`dst` is translated by hand,
    `dist.broadcast(t, src=dist.get_global_rank(group, 0), group=group)`, when the target is 2.6 or
    later, and rewrites them to `group_src=0` / `group_dst=0`.

    ## Why is this bad?
    `src` and `dst` are global ranks. Since PyTorch 2.6 `broadcast`, `reduce`, `gather`, `scatter`,
    `send`/`recv`/`isend`/`irecv` and the object collectives take `group_src=` / `group_dst=`, the
    rank inside `group`, so the translation (and the global-rank bookkeeping it needs) goes away.
    Opt-in: the old form works on every release.

    The fix is safe: `group_src=r` with `group=g` is translated to `get_global_rank(g, r)` by the
    call itself; it is offered only when the `group=` argument is the same expression as the first
    argument of `get_global_rank`, and only for `src=`/`dst=` passed by keyword. When your minimum
    torch is below 2.6 the fix is unsafe: those releases have no `group_src=`.
    """

    code = "TP445"
    opt_in = True
    name = "group-rank-argument"
    summary = "`src=get_global_rank(group, r)` in a c10d call: use `group_src=r` / `group_dst=r` (2.6+; opt-in)"
    changed_in = v("2.6")
    replacement_since = v("2.6")
    fix_safety = SAFE
    fix_safety_note = "`group_src=r` / `group_dst=r` with the same `group` is the same global rank; unsafe below min-torch 2.6 (no such keyword)."
    references = ("https://docs.pytorch.org/docs/stable/distributed.html#collective-functions",)
    catalog_ids = ("dist.c10d-group-rank-args",)
    calls = frozenset(f"{module}.{name}" for module in _C10D for name in _CALLS)

    VALID = [
        Valid("import torch.distributed as dist\ndist.broadcast(t, group_src=0, group=pg)\n", min_torch="2.6"),
        Valid("import torch.distributed as dist\ndist.broadcast(t, src=dist.get_global_rank(pg, 0), group=pg)\n",
              target_torch="2.5"),
        # Translated against another group: not the same thing.
        Valid("import torch.distributed as dist\ndist.broadcast(t, src=dist.get_global_rank(tp, 0), group=dp)\n",
              min_torch="2.6"),
    ]
    INVALID = [
        Invalid("import torch.distributed as dist\ndist.broadcast(t, src=dist.get_global_rank(pg, 0), group=pg)\n",
                min_torch="2.6", fixed="import torch.distributed as dist\ndist.broadcast(t, group_src=0, group=pg)\n"),
        Invalid("from torch import distributed as dist\n"
                "dist.gather_object(obj, out, dst=dist.get_global_rank(self.group, 0), group=self.group)\n",
                min_torch="2.8",
                fixed="from torch import distributed as dist\n"
                      "dist.gather_object(obj, out, group_dst=0, group=self.group)\n"),
        Invalid("import torch.distributed as dist\ndist.send(t, dist.get_global_rank(pg, peer), pg)\n", min_torch="2.6"),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.target < self.changed_in:
            return
        name = qualname.rpartition(".")[2]
        rank_keyword, rank_position, group_position = _CALLS[name]
        rank = argument(call, rank_keyword, rank_position)
        group = argument(call, "group", group_position)
        if rank is None or group is None:
            return
        translation = rank[1]
        if not (isinstance(translation, ast.Call) and ctx.resolves_to(translation.func) in _TRANSLATE
                and len(translation.args) == 2 and not translation.keywords):
            return
        translated_group, group_rank = translation.args
        if ctx.source(translated_group) != ctx.source(group[1]):
            return
        new_keyword = f"group_{rank_keyword}"
        message = (f"`{rank_keyword}=get_global_rank(group, r)`: since PyTorch {self.changed_in} `{name}` takes "
                   f"`{new_keyword}=r`, the rank within `group`{ctx.needs_note(self.changed_in)}")
        fix = None
        if isinstance(rank[0], ast.keyword):
            fix = Fix(message=f"Pass `{new_keyword}={ctx.source(group_rank)}`",
                      edits=[replace_node(ctx, rank[0], f"{new_keyword}={ctx.source(group_rank)}")],
                      applicability=ctx.applicability(needs=self.changed_in), obsolete_names=root_name(translation.func))
        yield ctx.diagnostic(translation, message, fix)
