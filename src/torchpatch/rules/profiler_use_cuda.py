"""TP112: the profilers' deprecated use_cuda= argument was removed in PyTorch 2.14."""

from __future__ import annotations

from torchpatch.rules._helpers import has_double_star, is_literal, keyword, remove_argument
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_KINETO = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile"})
_AUTOGRAD = frozenset({"torch.autograd.profiler.profile"})


class ProfilerUseCuda(Rule):
    """
    ## What it does
    Flags `use_cuda=` in `torch.profiler.profile(...)` and `torch.autograd.profiler.profile(...)`.
    The fix rewrites `torch.profiler.profile(use_cuda=True)` to
    `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` and
    `torch.autograd.profiler.profile(use_cuda=True)` to `use_device="cuda"`; `use_cuda=False` is
    dropped.

    ## Why is this bad?
    `torch.profiler.profile(use_cuda=...)` has warned since 1.8.1 (`FutureWarning`, "use `activities`
    argument instead"), and in 2.4–2.13 it no longer changed what was profiled at all: it only edited
    a local set that was never passed on, so the default activities (CPU plus CUDA when available)
    were used. `torch.autograd.profiler.profile(use_cuda=True)` became an alias of
    `use_device="cuda"` ("The attribute `use_cuda` will be deprecated soon"). PyTorch 2.14 removed
    the argument from both, so it raises `TypeError: unexpected keyword argument 'use_cuda'`.
    `torch.autograd.profiler_legacy.profile` keeps its `use_cuda` and is not reported.
    """

    code = "TP112"
    name = "profiler-use-cuda"
    summary = "`profile(use_cuda=...)` → `activities=[...]` / `use_device=\"cuda\"` (removed in 2.14)"
    deprecated_in = v("1.8")
    removed_in = v("2.14")
    replacement_since = v("2.4")
    fix_safety = SAFE
    fix_safety_note = (
        "`torch.autograd.profiler.profile(use_cuda=True)` set `use_device=\"cuda\"` itself, so the rewrite "
        "is identical. For `torch.profiler.profile` the flag had no effect on what was recorded; the fix "
        "states the intended activities (CPU and CUDA, the default on a CUDA machine; a CPU-only machine "
        "warns \"CUDA is not available, disabling CUDA profiling\" and profiles the CPU as before)."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/profiler.html",
        "https://github.com/pytorch/pytorch/pull/192543",
    )
    catalog_ids = ("prof.use-cuda-removed",)
    calls = _KINETO | _AUTOGRAD

    VALID = [
        "from torch.profiler import ProfilerActivity, profile\n"
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n    step()\n",
        "import torch\nwith torch.autograd.profiler.profile(use_device=\"cuda\") as prof:\n    step()\n",
        # (the legacy profiler itself is deprecated by torch's @deprecated, which TP206 reports)
        "import torch\nwith torch.autograd.profiler_legacy.profile(use_cuda=True) as prof:  # noqa: TP206\n    step()\n",
        # Look-alikes: line_profiler/cProfile-style APIs and a method.
        "import torch\nfrom mylib import profile\nwith profile(use_cuda=True):\n    step()\n",
        "import torch\nwith self.profiler.profile(use_cuda=True):\n    step()\n",
    ]
    INVALID = [
        Invalid("import torch\nwith torch.profiler.profile(use_cuda=True) as prof:\n    step()\n",
                fixed="import torch\nfrom torch.profiler import ProfilerActivity\n"
                "with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n"
                "    step()\n"),
        Invalid("from torch.profiler import profile, ProfilerActivity\n"
                "with profile(record_shapes=True, use_cuda=True) as prof:\n    step()\n",
                fixed="from torch.profiler import profile, ProfilerActivity\n"
                "with profile(record_shapes=True, activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n"
                "    step()\n"),
        Invalid("import torch\nwith torch.autograd.profiler.profile(use_cuda=True, record_shapes=True) as prof:\n    step()\n",
                fixed="import torch\nwith torch.autograd.profiler.profile(use_device=\"cuda\", record_shapes=True) as prof:\n"
                "    step()\n"),
        Invalid("from torch.autograd import profiler\nwith profiler.profile(use_cuda=False) as prof:\n    step()\n",
                fixed="from torch.autograd import profiler\nwith profiler.profile() as prof:\n    step()\n"),
        Invalid("from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU], use_cuda=True) as prof:\n    step()\n",
                fixed="from torch.profiler import ProfilerActivity, profile\n"
                "with profile(activities=[ProfilerActivity.CPU]) as prof:\n    step()\n"),
        # A non-literal flag: reported without a fix.
        Invalid("import torch\nwith torch.autograd.profiler.profile(use_cuda=on_gpu) as prof:\n    step()\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "use_cuda")
        if argument is None:
            return
        kineto = qualname in _KINETO
        # The rule's deprecated_in (1.8) is torch.profiler's FutureWarning (1.8.1); the autograd profiler's
        # own warning ("will be deprecated soon") is in every wheel from 2.4.1: the message names which one.
        if kineto:
            api, since, replacement = ("torch.profiler.profile", "1.8.1",
                                       "`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`")
        else:
            api, since, replacement = "torch.autograd.profiler.profile", "2.4", "`use_device=\"cuda\"`"
        removed = f"removed in PyTorch {self.removed_in}" if ctx.target >= self.removed_in \
            else f"removed in {self.removed_in}"
        message = (f"`{api}(use_cuda=...)` is deprecated since PyTorch {since}, {removed} (TypeError); "
                   f"use {replacement}")
        yield ctx.diagnostic(argument, message, self._fix(ctx, call, argument, kineto))

    def _fix(self, ctx, call, argument, kineto: bool) -> Fix | None:
        if is_literal(argument.value, False):
            return Fix(message="Drop `use_cuda=False` (the default)", edits=[remove_argument(ctx, call, argument)],
                       applicability=SAFE)
        if not is_literal(argument.value, True):
            return None
        if kineto:
            if keyword(call, "activities") is not None:
                # The flag never reached the profiler: the given activities are what it records.
                return Fix(message="Drop `use_cuda` (it did not change the recorded activities)",
                           edits=[remove_argument(ctx, call, argument)], applicability=SAFE)
            if has_double_star(call):
                return None
            activity, import_edits = ctx.name_for("torch.profiler.ProfilerActivity")
            text = f"activities=[{activity}.CPU, {activity}.CUDA]"
            return Fix(message="Pass `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`",
                       edits=[*import_edits, Edit(ctx.start(argument), ctx.end(argument), text)],
                       applicability=SAFE)
        if keyword(call, "use_device") is not None or has_double_star(call):
            return None
        return Fix(message="Pass `use_device=\"cuda\"`",
                   edits=[Edit(ctx.start(argument), ctx.end(argument), 'use_device="cuda"')],
                   applicability=ctx.applicability(needs=self.replacement_since))
