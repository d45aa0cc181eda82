"""Round 13, part d of issue #8's precision sample: what reading real packages showed, as synthetic
cases of the same shape (no package code)."""

from __future__ import annotations

import warnings

import pytest

from precision_helpers import findings_of


# -- `from torch.nn.utils.weight_norm import WeightNorm`, used without `apply` --------------------------------
# (vissl's DINO head.) The submodule torch/nn/utils/weight_norm.py shares the deprecated function's name, but its
# class `WeightNorm` warns only in the static `apply` (2.4.1-2.15.0): a layer that builds `WeightNorm("weight", 0)`
# and calls `compute_weight` on itself uses nothing deprecated, and "use parametrizations.weight_norm" does not
# apply to that import. The same file's `nn.utils.weight_norm(...)` call is still reported.

_NORMALIZED_LINEAR = '''import torch
from torch.nn.utils.weight_norm import WeightNorm


class Normalized(torch.nn.Module):
    def forward(self, x):
        hook = WeightNorm(name="weight", dim=0)
        weight = hook.compute_weight(self)
        return x @ weight.t()
'''


@pytest.mark.parametrize("code", [
    _NORMALIZED_LINEAR,
    "from torch.nn.utils.weight_norm import WeightNorm\n"
    "def f(m):\n    return WeightNorm('weight', 0).compute_weight(m)\n",
    "from torch.nn.utils.weight_norm import WeightNorm as WN\n"
    "def f(m):\n    w = WN('weight', 0)\n    return w.compute_weight(m)\n",
    "from torch.nn.utils.weight_norm import WeightNorm, remove_weight_norm\ndef f(m):\n"
    "    remove_weight_norm(m)\n    return WeightNorm('weight', 0).compute_weight(m)\n",
])
def test_weight_norm_class_used_without_apply_is_not_reported(lint, code):
    assert findings_of(lint, code, "TP201") == []


def test_the_files_weight_norm_call_is_still_reported(lint):
    code = _NORMALIZED_LINEAR + "\nlayer = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))\n"
    findings = findings_of(lint, code, "TP201")
    assert len(findings) == 1
    assert findings[0].row == code.splitlines().index("layer = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))") + 1


@pytest.mark.parametrize("code", [
    "from torch.nn.utils.weight_norm import WeightNorm\nWeightNorm.apply(m, 'weight', 0)\n",
    "from torch.nn.utils.weight_norm import WeightNorm as WN\napply = WN.apply\n",
    "from torch.nn.utils.weight_norm import WeightNorm\ndef f(m):\n    w = WeightNorm('weight', 0)\n"
    "    return w.apply(m, 'weight', 0)\n",
    "from torch.nn.utils.weight_norm import WeightNorm\n"
    "def f(m):\n    return WeightNorm('weight', 0).apply(m, 'weight', 0)\n",
    "from torch.nn.utils.weight_norm import WeightNorm\nclass Mine(WeightNorm):\n    pass\n",  # a subclass
    "from torch.nn.utils.weight_norm import WeightNorm\nregister(WeightNorm)\n",  # handed elsewhere
    "from torch.nn.utils.weight_norm import WeightNorm\nhook = WeightNorm('weight', 0)\n",  # module-level object
    "from torch.nn.utils.weight_norm import WeightNorm\ndef f(m):\n    w = WeightNorm('weight', 0)\n    return w\n",
    "from torch.nn.utils.weight_norm import WeightNorm, weight_norm\ndef f(m):\n    return weight_norm(m)\n",
])
def test_weight_norm_class_that_can_reach_apply_is_still_reported(lint, code):
    assert len(findings_of(lint, code, "TP201")) == 1


@pytest.mark.torch
def test_weight_norm_class_constructor_and_compute_weight_do_not_warn_but_apply_does():
    torch = pytest.importorskip("torch")
    from torch.nn.utils.weight_norm import WeightNorm

    layer = torch.nn.Linear(3, 2)
    layer.weight_g = torch.nn.Parameter(torch.ones(2, 1))
    layer.weight_v = torch.nn.Parameter(torch.randn(2, 3))
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        WeightNorm(name="weight", dim=0).compute_weight(layer)
    assert not [w for w in quiet if "deprecated" in str(w.message)]
    with warnings.catch_warnings(record=True) as applied:
        warnings.simplefilter("always")
        WeightNorm.apply(torch.nn.Linear(3, 2), "weight", 0)
    assert any(issubclass(w.category, FutureWarning) for w in applied)
