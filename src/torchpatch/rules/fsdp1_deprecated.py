"""TP213: wrapping a model in FSDP1's FullyShardedDataParallel instead of FSDP2's fully_shard."""

from __future__ import annotations

from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v


class Fsdp1Deprecated(Rule):
    """
    ## What it does
    Flags calls that wrap a model in `torch.distributed.fsdp.FullyShardedDataParallel` (FSDP1),
    including the usual alias `from torch.distributed.fsdp import FullyShardedDataParallel as FSDP`.

    ## Why is this bad?
    The PyTorch documentation calls FSDP1 deprecated in favour of FSDP2,
    `torch.distributed.fsdp.fully_shard`, public since PyTorch 2.6. FSDP1 itself does not warn: no
    wheel up to 2.15 emits a runtime warning, and no release note gives a removal date, so this is
    a docs-only deprecation, reported here with the version of the public replacement. FSDP2 shards
    each parameter as a `DTensor`, composes with tensor parallelism and `torch.compile`, and needs no
    flat parameters. The migration is not mechanical: call `fully_shard(block)` on each
    transformer block and then `fully_shard(model)` (bottom-up, in place), build the optimizer
    afterwards, replace `MixedPrecision` with `MixedPrecisionPolicy(param_dtype=..., reduce_dtype=...)`,
    and save checkpoints with `torch.distributed.checkpoint.state_dict.get_state_dict` instead of
    `FSDP.state_dict_type`.
    """

    code = "TP213"
    name = "fsdp1-deprecated"
    summary = "FSDP1 `FullyShardedDataParallel(...)` (deprecated in the docs; use FSDP2 `fully_shard`, 2.6+)"
    deprecated_in = v("2.6")
    replacement_since = v("2.6")
    references = (
        "https://docs.pytorch.org/tutorials/intermediate/FSDP_tutorial.html",
        "https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html",
    )
    catalog_ids = ("dist.fsdp1-deprecated",)
    calls = frozenset({
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    })

    VALID = [
        'from torch.distributed.fsdp import fully_shard\nfor block in model.layers:\n    fully_shard(block)\n'
        'fully_shard(model)\n',
        'from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nif isinstance(model, FSDP):\n    pass\n',
        'from fairscale.nn import FullyShardedDataParallel as FSDP\nmodel = FSDP(model)\n',
        'import torch\ndef FSDP(module):\n    return module\nmodel = FSDP(model)\n',
        'class Trainer:\n    def wrap(self, model):\n        return self.fsdp.FullyShardedDataParallel(model)\n',
    ]
    INVALID = [
        Invalid('from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(model, use_orig_params=True)\n'),
        Invalid('import torch\nmodel = torch.distributed.fsdp.FullyShardedDataParallel(model)\n'),
        Invalid('import torch.distributed.fsdp as fsdp\nmodel = fsdp.FullyShardedDataParallel(\n    model,\n'
                '    auto_wrap_policy=policy,\n)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        message = ("`FullyShardedDataParallel` (FSDP1) is deprecated in the PyTorch docs (no runtime warning as of "
                   f"2.15): migrate to FSDP2 `torch.distributed.fsdp.fully_shard`, public since PyTorch {self.replacement_since}")
        yield ctx.diagnostic(call.func, message)
