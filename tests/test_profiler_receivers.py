"""TP208 and rules/_receivers.py: profiler event types inferred from the code, facts checked on torch."""

from __future__ import annotations

import warnings

import pytest

from torchpatch.rules.profiler_cuda_attributes import DEPRECATED_ON_AVERAGE, DEPRECATED_ON_EVENT, MISSING_ON_AVERAGE


def _codes(lint, code):
    return [(f.code, f.row) for f in lint(code, select=["TP208"]).findings]


def test_indexing_comprehensions_and_chains(lint):
    code = ("import torch\n"
            "def f():\n"
            "    with torch.profiler.profile() as prof:\n"
            "        run()\n"
            "    averages = prof.key_averages()\n"
            "    a = averages[0].cuda_time_total\n"
            "    b = [e.self_cuda_memory_usage for e in prof.events()]\n"
            "    c = prof.events()[1].cuda_time\n"
            "    d = averages[0].device_time_total\n"
            "    return a, b, c, d\n")
    assert _codes(lint, code) == [("TP208", 6), ("TP208", 7), ("TP208", 8)]


def test_unknown_receivers_are_not_guessed(lint):
    code = ("import torch\n"
            "def f(events):\n"
            "    with torch.profiler.profile() as prof:\n"
            "        run()\n"
            "    for event in events:\n"
            "        print(event.cuda_time_total)\n"
            "    prof = make_other()\n"
            "    return prof.events()[0].cuda_time_total\n")
    assert _codes(lint, code) == []


def test_a_local_class_named_profile_is_not_a_profiler(lint):
    code = ("import torch\nclass profile:\n    pass\nwith profile() as prof:\n    pass\n"
            "print(prof.events()[0].cuda_time_total)\n")
    assert _codes(lint, code) == []


@pytest.mark.torch
def test_the_attribute_facts_hold_on_torch():
    torch = pytest.importorskip("torch")
    with torch.profiler.profile() as prof:
        torch.ones(3) + 1
    average, event = prof.key_averages()[0], prof.events()[0]
    for old, new in DEPRECATED_ON_EVENT.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(event, old) == getattr(event, new)
        assert any(issubclass(w.category, FutureWarning) and "deprecated" in str(w.message) for w in caught), old
    for old, new in MISSING_ON_AVERAGE.items():
        assert not hasattr(average, old)
        getattr(average, new)
    for old, new in DEPRECATED_ON_AVERAGE.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(average, old) == getattr(average, new)
        assert any(issubclass(w.category, FutureWarning) for w in caught)
