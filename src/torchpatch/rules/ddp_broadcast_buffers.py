"""TP230: DistributedDataParallel(broadcast_buffers=...) is deprecated since PyTorch 2.13 (forward_sync_buffers=)."""

from __future__ import annotations

from torchpatch.rules._helpers import has_starred
from torchpatch.rules._helpers import has_double_star, is_literal, keyword, remove_argument
from torchpatch.rules.base import SAFE, UNSAFE, CallNeed, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: ``DistributedDataParallel(module, device_ids, output_device, dim, broadcast_buffers, ...)``: the fifth
#: parameter in every release 2.4–2.15 (src 2.4, 2.12, 2.13 torch/nn/parallel/distributed.py).
_POSITION = 4
_DDP = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")
#: The composable ``replicate(module, device_id=None, **kwargs)`` hands its keywords to
#: ``DistributedDataParallel`` (2.4 and 2.13 torch/distributed/_composable/replicate.py), so 2.13 warns there too
#: (torchrec's test_fp_embeddingbag.py: ``replicate(..., broadcast_buffers=False)``).
_REPLICATE = ("torch.distributed._composable.replicate", "torch.distributed._composable.replicate.replicate")


class DdpBroadcastBuffers(Rule):
    """
    ## What it does
    Flags `broadcast_buffers=` in `torch.nn.parallel.DistributedDataParallel(...)` calls, and in the composable
    `torch.distributed._composable.replicate(...)`, which passes its keywords on to `DistributedDataParallel`.

    ## Why is this bad?
    PyTorch 2.13 deprecated `broadcast_buffers` (a `FutureWarning` when the model is wrapped) in
    favour of `forward_sync_buffers`, which did not exist before 2.13. The two are not the same
    switch: `broadcast_buffers=False` turned off both the broadcast of buffers from rank 0 at
    initialization and the one at the start of every `forward`, while `forward_sync_buffers=False`
    turns off only the `forward` one: buffers are still copied from rank 0 when the model is
    wrapped (unless `init_sync=False`). Code that keeps rank-local buffers (per-rank statistics,
    buffers loaded differently on each rank) would see them overwritten at init.

    `broadcast_buffers=True` is the old default: the fix drops it, which behaves the same on every
    release. `broadcast_buffers=False` becomes `forward_sync_buffers=False`; that fix is unsafe
    (buffers are synced at init), and it needs PyTorch 2.13. With `init_sync=False` in the same
    call nothing is synced at init anyway, so the rename is safe when your minimum is 2.13. When
    `forward_sync_buffers=` is passed as well, 2.13 ignores `broadcast_buffers` and the fix drops it.
    """

    code = "TP230"
    name = "ddp-broadcast-buffers"
    summary = "`DistributedDataParallel(broadcast_buffers=...)` (deprecated 2.13; `forward_sync_buffers=`)"
    deprecated_in = v("2.13")
    replacement_since = v("2.13")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Dropping `broadcast_buffers=True` is safe on every release (it is the default). Renaming "
        "`broadcast_buffers=False` to `forward_sync_buffers=False` needs PyTorch 2.13 and changes initialization: "
        "buffers are broadcast from rank 0 when the model is wrapped, unless `init_sync=False` (then it is safe)."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html",
    )
    catalog_ids = ("dist.ddp-broadcast-buffers",)
    calls = frozenset(_DDP + _REPLICATE)
    call_needs = {**{name: CallNeed(passed=(("broadcast_buffers", _POSITION),)) for name in _DDP},
                  **{name: CallNeed(passed=(("broadcast_buffers", None),)) for name in _REPLICATE}}

    VALID = [
        "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n",
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "model = DDP(model, forward_sync_buffers=False)\n", min_torch="2.13"),
        # Look-alikes: another library's DDP wrapper, a local class, FSDP.
        "import torch\nfrom lightning.fabric.strategies import DDPStrategy\ns = DDPStrategy(broadcast_buffers=False)\n",
        "import torch\nclass DistributedDataParallel:\n    def __init__(self, m, broadcast_buffers=True):\n        pass\n"
        "DistributedDataParallel(m, broadcast_buffers=False)\n",
        "import torch\nfrom apex.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, broadcast_buffers=False)\n",
    ]
    INVALID = [
        Invalid("import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], broadcast_buffers=True)\n",
                fixed="import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n"),
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "model = DDP(\n    model,\n    broadcast_buffers=False,\n    find_unused_parameters=True,\n)\n",
                fixed="from torch.nn.parallel import DistributedDataParallel as DDP\n"
                      "model = DDP(\n    model,\n    forward_sync_buffers=False,\n    find_unused_parameters=True,\n)\n"),
        Invalid("import torch.nn.parallel as par\nmodel = par.DistributedDataParallel(model, broadcast_buffers=False, init_sync=False)\n",
                fixed="import torch.nn.parallel as par\nmodel = par.DistributedDataParallel(model, forward_sync_buffers=False, init_sync=False)\n",
                min_torch="2.13"),
        Invalid("from torch.nn.parallel import DistributedDataParallel\n"
                "model = DistributedDataParallel(model, broadcast_buffers=args.sync, forward_sync_buffers=False)\n",
                fixed="from torch.nn.parallel import DistributedDataParallel\n"
                      "model = DistributedDataParallel(model, forward_sync_buffers=False)\n",
                min_torch="2.13"),
        Invalid("import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, [0], 0, 0, False)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "broadcast_buffers")
        if argument is None:
            if qualname in _REPLICATE or has_starred(call) or has_double_star(call) or len(call.args) <= _POSITION:
                return
            yield ctx.diagnostic(call.args[_POSITION], self._message("passed positionally"))
            return
        detail = "passed on by `replicate`" if qualname in _REPLICATE else ""
        yield ctx.diagnostic(argument, self._message(detail), self._fix(ctx, call, argument))

    def _message(self, detail: str = "") -> str:
        where = f" ({detail})" if detail else ""
        return (f"`DistributedDataParallel(broadcast_buffers=...)`{where} is deprecated since PyTorch "
                f"{self.deprecated_in}; use `forward_sync_buffers=` (2.13+), which still syncs buffers at init")

    def _fix(self, ctx, call, argument):
        if keyword(call, "forward_sync_buffers") is not None:
            # 2.13+ ignores broadcast_buffers then (and the call cannot run on an older release).
            return Fix(message="Drop `broadcast_buffers` (ignored when `forward_sync_buffers` is passed)",
                       edits=[remove_argument(ctx, call, argument)], applicability=SAFE)
        if is_literal(argument.value, True):
            return Fix(message="Drop `broadcast_buffers=True` (the default on every release)",
                       edits=[remove_argument(ctx, call, argument)], applicability=SAFE)
        if has_double_star(call):
            return None  # init_sync may be in **kwargs
        start = ctx.start(argument)
        edit = Edit(start, start + len("broadcast_buffers"), "forward_sync_buffers")
        no_init_sync = is_literal(getattr(keyword(call, "init_sync"), "value", None), False)
        applicability = ctx.applicability(needs=self.replacement_since, behaviour_changes=not no_init_sync)
        note = "" if no_init_sync else " (buffers are then still broadcast from rank 0 at init)"
        return Fix(message=f"Rename to `forward_sync_buffers`{note}{ctx.needs_note(self.replacement_since)}",
                   edits=[edit], applicability=applicability)
