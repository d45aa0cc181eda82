"""TP500 (opt-in): DataLoader without num_workers loads every batch in the training process."""

from __future__ import annotations

from torchpatch.rules._helpers import has_star_args, keyword
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

#: DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...): index 5 (2.4.1 and 2.13).
_NUM_WORKERS_POSITION = 5


class DataloaderNumWorkers(Rule):
    """
    ## What it does
    Flags `torch.utils.data.DataLoader(...)` calls that do not pass `num_workers`. Opt-in: enable it
    with `--extend-select TP500` (or `--select TOR401`).

    ## Why is this bad?
    The default, `num_workers=0` (the same in every release from 2.4 through 2.15), loads and
    collates every batch synchronously in the training process, so the accelerator waits for the
    data. PyTorch's profiler reports this as the "Synchronized DataLoader" anti-pattern
    (`torch/profiler/_pattern_matcher.py`); TorchFix's TOR401 is a copy of it. Setting
    `num_workers > 0` moves loading into worker processes.

    It is a performance hint, not a bug: small in-memory datasets, debugging, and platforms where
    worker processes are expensive are good reasons for 0. So the rule is opt-in, an explicit
    `num_workers=0` is taken as that decision and not reported, and there is no fix (the right
    number depends on the machine).
    """

    code = "TP500"
    name = "dataloader-num-workers"
    summary = "`DataLoader` without `num_workers` loads batches synchronously (performance hint)"
    changed_in = v("2.4")  # no release changed the default; 2.4 is the oldest release this hint is checked against
    opt_in = True
    references = (
        "https://docs.pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading",
        "https://github.com/pytorch/pytorch/blob/main/torch/profiler/_pattern_matcher.py",
    )
    torchfix_codes = ("TOR401",)
    calls = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

    VALID = [
        "import torch\nloader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=4)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=32, num_workers=0)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, 32, True, None, None, 8)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, **loader_kwargs)\n",
        # Look-alikes: another library's DataLoader, a local class.
        "import torch\nfrom torch_geometric.loader import DataLoader\nloader = DataLoader(ds, batch_size=32)\n",
        "import torch\nclass DataLoader:\n    pass\nloader = DataLoader(ds)\n",
    ]
    INVALID = [
        Invalid("import torch\nloader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True)\n"),
        Invalid("from torch.utils.data import DataLoader as DL\nloader = DL(ds)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if keyword(call, "num_workers") is not None or has_star_args(call) or len(call.args) > _NUM_WORKERS_POSITION:
            return
        yield ctx.diagnostic(
            call.func,
            "`DataLoader` without `num_workers` loads every batch in the main process (default 0 in PyTorch 2.4 "
            "through 2.15); pass `num_workers=N` (N > 0) for asynchronous loading, or `num_workers=0` to keep it",
        )
