"""TP208: profiler events read through their pre-2.4 `cuda_*` names (deprecated on FunctionEvent, gone on averages)."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: FunctionEvent (``prof.events()``): properties that warn "`X` is deprecated. Use `Y` instead." (FutureWarning),
#: read from torch/autograd/profiler_util.py of every wheel 2.4.1 … 2.15.0 and checked on 2.13.
DEPRECATED_ON_EVENT = {
    "cuda_time_total": "device_time_total", "self_cuda_time_total": "self_device_time_total",
    "self_cuda_memory_usage": "self_device_memory_usage", "cuda_time": "device_time",
}
#: FunctionEventAvg (``prof.key_averages()``): no such attribute in any wheel 2.4.1 … 2.15.0 (AttributeError),
#: except ``cuda_time``, a deprecated property of its FormattedTimesMixin base.
MISSING_ON_AVERAGE = {
    "cuda_time_total": "device_time_total", "self_cuda_time_total": "self_device_time_total",
    "self_cuda_memory_usage": "self_device_memory_usage", "cuda_memory_usage": "device_memory_usage",
}
DEPRECATED_ON_AVERAGE = {"cuda_time": "device_time"}


class ProfilerCudaAttributes(Rule):
    """
    ## What it does
    Flags the `cuda_*` attributes of profiler events — `cuda_time_total`, `self_cuda_time_total`,
    `self_cuda_memory_usage`, `cuda_time` — where the event comes from a profiler built in the same
    function (`with torch.profiler.profile(...) as prof:` then `prof.events()` or
    `prof.key_averages()`, looped over or indexed), and renames them to the `device_*` names.
    How the receiver is inferred, and what is not, is described in `rules/_receivers.py`.

    ## Why is this bad?
    PyTorch renamed the times to `device_*` (they cover CUDA, XPU and other accelerators). On the
    events of `prof.events()` the old names are properties that warn `FutureWarning: ... is
    deprecated` in every release 2.4 … 2.15; on the averages of `prof.key_averages()` they do not
    exist at all (`AttributeError`) in any of those releases, except `cuda_time`, which warns. The
    `device_*` names exist on both in every release 2.4 … 2.15, so the rename is safe.
    """

    code = "TP208"
    name = "profiler-cuda-attributes"
    summary = "Profiler events read through `cuda_*` names (deprecated on events, missing on key_averages())"
    deprecated_in = v("2.4")
    fix_safety = SAFE
    fix_safety_note = "The `device_*` attribute exists on both event classes in every release 2.4 … 2.15."
    references = ("https://docs.pytorch.org/docs/stable/autograd.html#profiler",)
    calls = receivers.PROFILERS
    #: ``def summarize(prof): for row in prof.key_averages(): ...``: only torch's profilers and EventList have it.
    methods = frozenset({"key_averages"})

    VALID = [
        "import torch\nwith torch.profiler.profile() as prof:\n    run()\n"
        "for event in prof.key_averages():\n    print(event.self_device_time_total)\n",
        # A name that holds something else too, and a profiler passed in from elsewhere.
        "import torch\nwith torch.profiler.profile() as prof:\n    run()\nevents = prof.events()\nevents = other()\n"
        "print(events[0].cuda_time_total)\n",
        "import torch\ndef report(prof):\n    return [e.cuda_time_total for e in prof.events()]\n",
        # One loop over events, another over something else: `e` is not known.
        "import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor e in prof.events():\n    pass\n"
        "for e in other():\n    print(e.cuda_time_total)\n",
    ]
    INVALID = [
        Invalid("import torch\nwith torch.profiler.profile() as prof:\n    run()\n"
                "for event in prof.key_averages():\n    print(event.self_cuda_time_total)\n",
                fixed="import torch\nwith torch.profiler.profile() as prof:\n    run()\n"
                      "for event in prof.key_averages():\n    print(event.self_device_time_total)\n"),
        Invalid("import torch\ndef f():\n    prof = torch.autograd.profiler.profile(use_device='cuda')\n"
                "    with prof:\n        run()\n    return sum(e.cuda_time_total for e in prof.function_events)\n",
                fixed="import torch\ndef f():\n    prof = torch.autograd.profiler.profile(use_device='cuda')\n"
                      "    with prof:\n        run()\n    return sum(e.device_time_total for e in prof.function_events)\n"),
        # The same loop variable in two loops over events (issue #23), run under torch 2.13.
        Invalid("import torch\nwith torch.profiler.profile() as prof:\n    torch.ones(2) + 1\n"
                "for e in prof.events():\n    print(e.cuda_time_total)\nfor e in prof.events():\n    print(e.cuda_time)\n",
                fixed="import torch\nwith torch.profiler.profile() as prof:\n    torch.ones(2) + 1\n"
                      "for e in prof.events():\n    print(e.device_time_total)\nfor e in prof.events():\n    print(e.device_time)\n",
                torch_warns="cuda_time_total. is deprecated"),
    ]

    def check_method_call(self, ctx, call):
        yield from self.check_call(ctx, call, None)

    def check_call(self, ctx, call, qualname):
        for node, kind in receivers.element_accesses_once(ctx, call, self.code):
            yield from self._report(ctx, node, kind)

    def _report(self, ctx, node: ast.Attribute, kind: str):
        attribute = node.attr
        if kind == receivers.EVENT_AVG and attribute in MISSING_ON_AVERAGE:
            new = MISSING_ON_AVERAGE[attribute]
            message = (f"`FunctionEventAvg` (from `key_averages()`) has no `{attribute}` in any PyTorch release "
                       f"2.4 through 2.15 (AttributeError); use `{new}`")
        else:
            table = DEPRECATED_ON_EVENT if kind == receivers.EVENT else DEPRECATED_ON_AVERAGE
            if attribute not in table:
                return
            new = table[attribute]
            message = f"`{attribute}` is deprecated (FutureWarning in PyTorch 2.4 through 2.15); use `{new}`"
        end = ctx.end(node)
        fix = Fix(f"Rename to `{new}`", [Edit(end - len(attribute), end, new)], SAFE)
        yield ctx.diagnostic(node, message, fix)

