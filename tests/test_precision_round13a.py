"""Round 13, part a of issue #8's precision sample (git snapshots of fairscale, pytorch_scatter and
pytorch/data): each false finding (or wrong message) read on real code, as a synthetic case of the same
shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP202/TP203 on a subclass of the deprecated GradScaler ---------------------------------------------
# (fairscale's grad scalers subclass `torch.cuda.amp.grad_scaler.GradScaler`, one without an `__init__`,
# one whose `__init__` calls `super().__init__` by keywords: both reach the old class's deprecated
# `__init__`, so the finding is right. The message advised `functools.partial(torch.amp.GradScaler,
# "cuda")`, which cannot be a base class (`class S(functools.partial(...))` raises TypeError). The base to
# name is `torch.amp.GradScaler`, whose first parameter is `device` (2.4.1-2.15.0 torch/amp/grad_scaler.py).)

@pytest.mark.parametrize("source", [
    "from torch.cuda.amp.grad_scaler import GradScaler as Base\nclass Scaler(Base):\n    pass\n",
    "import torch\nclass Scaler(torch.cuda.amp.GradScaler):\n"
    "    def __init__(self, init_scale=2.0):\n        super().__init__(init_scale=init_scale)\n",
])
def test_a_gradscaler_base_class_is_told_to_subclass_the_new_class(lint, source):
    findings = findings_of(lint, source, "TP202", target="2.15", min_torch="2.4")
    base_findings = [f for f in findings if f.row == 2]
    assert len(base_findings) == 1
    message = base_findings[0].message
    assert "functools.partial" not in message
    assert "as a base class" in message and "`torch.amp.GradScaler`" in message
    assert '`"cuda"`' in message and "device" in message
    assert base_findings[0].fix is None


def test_a_cpu_gradscaler_base_class_names_the_cpu_device(lint):
    source = "import torch\nclass Scaler(torch.cpu.amp.GradScaler):\n    pass\n"
    findings = findings_of(lint, source, "TP203", target="2.15", min_torch="2.4")
    assert len(findings) == 1
    assert "as a base class" in findings[0].message and '`"cpu"`' in findings[0].message
    assert "functools.partial" not in findings[0].message


def test_a_gradscaler_passed_as_a_value_keeps_the_partial_advice(lint):
    source = "import torch\nscaler = make(torch.cuda.amp.GradScaler)\n"
    findings = findings_of(lint, source, "TP202", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [2]
    assert "functools.partial" in findings[0].message
