"""A function row whose name is also its defining submodule (torch.nn.utils.weight_norm): importing the
submodule's names that are not deprecated is not a use of the function (mmf imports remove_weight_norm so)."""

from __future__ import annotations

import warnings

import pytest

from precision_helpers import findings_of


def test_remove_weight_norm_from_the_submodule_is_not_reported(lint):
    source = "from torch.nn.utils.weight_norm import remove_weight_norm\nremove_weight_norm(layer)\n"
    assert findings_of(lint, source, "TP201") == []


@pytest.mark.parametrize("source", [
    "from torch.nn.utils.weight_norm import weight_norm\nlayer = weight_norm(layer)\n",
    "from torch.nn.utils.weight_norm import remove_weight_norm, weight_norm\nlayer = weight_norm(layer)\n",
    "from torch.nn.utils.weight_norm import WeightNorm\nWeightNorm.apply(m, 'weight', 0)\n",  # apply warns
    "from torch.nn.utils.weight_norm import *\nlayer = weight_norm(layer)\n",
    "import torch\nlayer = torch.nn.utils.weight_norm(layer)\n",
])
def test_the_deprecated_names_are_still_reported(lint, source):
    assert findings_of(lint, source, "TP201")


@pytest.mark.torch
def test_remove_weight_norm_does_not_warn_but_weight_norm_does():
    torch = pytest.importorskip("torch")
    from torch.nn.utils.weight_norm import remove_weight_norm, weight_norm

    layer = torch.nn.Linear(2, 2)
    with warnings.catch_warnings(record=True) as applied:
        warnings.simplefilter("always")
        weight_norm(layer)
    assert any(issubclass(w.category, FutureWarning) for w in applied)
    with warnings.catch_warnings(record=True) as removed:
        warnings.simplefilter("always")
        remove_weight_norm(layer)
    assert not [w for w in removed if "deprecated" in str(w.message)]
