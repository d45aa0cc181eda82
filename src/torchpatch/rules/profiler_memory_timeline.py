"""TP235: `prof.export_memory_timeline(path)` is deprecated since PyTorch 2.10."""

from __future__ import annotations

from torchpatch.rules._file_scan import defines_function
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_METHOD = "export_memory_timeline"


class ProfilerMemoryTimeline(Rule):
    """
    ## What it does
    Flags `.export_memory_timeline(...)` calls, the `torch.profiler.profile` method that writes a
    memory timeline plot. The method name belongs to the profiler only; a file that defines its own
    `export_memory_timeline`, or a receiver that resolves to a name outside torch, is not reported.

    ## Why is this bad?
    From PyTorch 2.10 `torch.profiler.profile.export_memory_timeline` (and `_KinetoProfile`'s) is
    wrapped in `@deprecated(..., category=FutureWarning)`: "`export_memory_timeline` is deprecated
    and will be removed in a future version" (2.10.0-2.15.0 wheels; 2.9.1 has no warning). The
    replacement is the CUDA caching allocator's memory snapshot:
    `torch.cuda.memory._record_memory_history()` before the workload and
    `torch.cuda.memory._dump_snapshot("snapshot.pickle")` after it, viewed with
    https://pytorch.org/memory_viz. (The warning itself names `torch.cuda.memory._export_memory_snapshot`,
    which no release from 2.4.1 to 2.15.0 has; `_dump_snapshot` writes the file.) That records allocator events, not the profiler's categorised
    timeline, so there is no automatic fix.
    """

    code = "TP235"
    name = "profiler-memory-timeline"
    summary = "`prof.export_memory_timeline()` is deprecated since 2.10; record a CUDA memory snapshot instead"
    deprecated_in = v("2.10")
    fix_safety = None
    fix_safety_note = (
        "The memory snapshot is a different artefact (allocator events, viewed with memory_viz) and is "
        "recorded around the workload, not exported from the profiler afterwards: rewrite by hand."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/profiler.html",
        "https://docs.pytorch.org/docs/stable/torch_cuda_memory.html",
    )
    catalog_ids = ("prof.memory-timeline",)
    methods = frozenset({_METHOD})

    VALID = [
        "import torch\ntorch.cuda.memory._record_memory_history()\nrun()\n"
        "torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")\n",
        "import torch\nprof.export_chrome_trace(\"trace.json\")\n",
        # A class of the project's own with that method name.
        "import torch\nclass Recorder:\n    def export_memory_timeline(self, path):\n        pass\n"
        "Recorder().export_memory_timeline(\"m.html\")\n",
        Valid("import torch\nprof.export_memory_timeline(\"memory.html\", device=\"cuda:0\")\n", target_torch="2.9"),
    ]
    INVALID = [
        Invalid("import torch\nwith torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True) as prof:\n"
                "    run()\nprof.export_memory_timeline(\"memory.html\", device=\"cuda:0\")\n"),
    ]

    def check_method_call(self, ctx, call):
        if defines_function(ctx, _METHOD):
            return
        receiver = ctx.resolves_to(call.func.value)
        if receiver is not None and receiver.split(".")[0] != "torch":
            return
        yield ctx.diagnostic(call, (
            f"`export_memory_timeline` is deprecated since PyTorch {self.deprecated_in}; record a memory snapshot "
            "with `torch.cuda.memory._record_memory_history()` and `torch.cuda.memory._dump_snapshot(path)`"))
