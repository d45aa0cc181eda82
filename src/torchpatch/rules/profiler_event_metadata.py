"""TP241: profiler events' `metadata_json` (deprecated 2.12, gone in 2.15) and `event_metadata` (deprecated 2.15)."""

from __future__ import annotations

from torchpatch.rules import _receivers as receivers
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v

#: FunctionEvent attribute -> (deprecated in, removed in, what to read instead), from
#: torch/autograd/profiler_util.py of the 2.10.0 … 2.15.0 wheels: `metadata_json` (a JSON string) is a plain
#: attribute in 2.10/2.11, a `@deprecated` property from 2.12 ("Use `event_metadata` instead") and absent in
#: 2.15; `event_metadata` (an `EventMetadata` NamedTuple, 2.12+) is a `@deprecated` property from 2.15
#: ("Use `metadata` instead"); `metadata` (a dict) exists from 2.14.
_CHANGES: dict[str, tuple[Version, Version | None, str]] = {
    "metadata_json": (v("2.12"), v("2.15"), "`metadata` (a dict, 2.14+) or `event_metadata` (2.12-2.14)"),
    "event_metadata": (v("2.15"), None, "`metadata` (a dict, 2.14+)"),
}


class ProfilerEventMetadata(Rule):
    """
    ## What it does
    Flags `event.metadata_json` and its successor `event.event_metadata` on
    profiler events (`FunctionEvent`) from a profiler built in the same function
    (`with torch.profiler.profile(...) as prof:` then `prof.events()`, looped over or indexed).
    How the receiver is inferred, and what is not, is described in `rules/_receivers.py`.

    ## Why is this bad?
    The event's extra metadata changed shape twice. `metadata_json` (a JSON string, 2.10) warns
    `FutureWarning: metadata_json is deprecated. Use event_metadata instead` from 2.12 and is gone
    in 2.15 (`AttributeError`); `event_metadata` (an `EventMetadata` NamedTuple, 2.12) warns "Use
    `metadata` instead" from 2.15; `metadata` is a dict keyed by the trace's field names (2.14).
    The three hold different types, so there is no rename fix: read the fields you need from
    `metadata`.
    """

    code = "TP241"
    name = "profiler-event-metadata"
    summary = "Profiler `event.metadata_json` (deprecated 2.12, removed 2.15) / `event.event_metadata` (deprecated 2.15)"
    deprecated_in = v("2.12")
    removed_in = v("2.15")
    replacement_since = v("2.14")
    fix_safety_note = "No fix: a JSON string, a NamedTuple and a dict are read differently."
    references = ("https://docs.pytorch.org/docs/stable/autograd.html#profiler",)
    catalog_ids = ("prof.event-metadata",)
    calls = receivers.PROFILERS
    #: ``def summarize(prof): for row in prof.key_averages(): ...``: only torch's profilers and EventList have it.
    methods = frozenset({"key_averages"})

    VALID = [
        "import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor event in prof.events():\n"
        "    print(event.metadata)\n",
        Valid("import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor event in prof.events():\n"
              "    print(event.metadata_json)\n", target_torch="2.11"),
        Valid("import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor event in prof.events():\n"
              "    print(event.event_metadata)\n", target_torch="2.14"),
        # The receiver is not known: a profiler passed in.
        "import torch\ndef report(prof):\n    return [e.metadata_json for e in prof.events()]\n",
    ]
    INVALID = [
        Invalid("import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor event in prof.events():\n"
                "    print(event.metadata_json)\n"),
        Invalid("import torch\nwith torch.profiler.profile() as prof:\n    run()\nevents = prof.events()\n"
                "print(events[0].event_metadata)\n"),
    ]

    def check_method_call(self, ctx, call):
        yield from self.check_call(ctx, call, None)

    def check_call(self, ctx, call, qualname):
        for node, kind in receivers.element_accesses_once(ctx, call, self.code):
            change = _CHANGES.get(node.attr)
            if kind != receivers.EVENT or change is None:
                continue
            deprecated_in, removed_in, instead = change
            if deprecated_in > ctx.target:
                continue
            if removed_in is not None and removed_in <= ctx.target:
                state = f"deprecated in PyTorch {deprecated_in}, removed in {removed_in} (AttributeError)"
            else:
                state = f"deprecated since PyTorch {deprecated_in} (FutureWarning)"
            yield ctx.diagnostic(node, f"`FunctionEvent.{node.attr}` is {state}; read {instead}")

