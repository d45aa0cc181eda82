"""TP260 deprecated-receiver-attribute: the receivers it knows, checked against torch 2.13, and what it leaves."""

from __future__ import annotations

import inspect

import pytest

from precision_helpers import findings_of
from torchpatch.rules.deprecated_receiver_attribute import DISTRIBUTION_MODULES


def test_the_distribution_list_is_torch_2_13s():
    distributions = pytest.importorskip("torch.distributions")
    public = {name: getattr(distributions, name) for name in distributions.__all__}
    found = {name: cls.__module__.rpartition(".")[2] for name, cls in public.items()
             if inspect.isclass(cls) and issubclass(cls, distributions.Distribution)
             and name not in ("Distribution", "ExponentialFamily")}
    assert found == DISTRIBUTION_MODULES


@pytest.mark.parametrize("code, row", [
    # a class imported from its defining submodule
    ("from torch.distributions.normal import Normal\nd = Normal(0.0, 1.0)\nx = d.sample_n(2)\n", 3),
    # inside a function, with the spec from tree_structure
    ("from torch.utils._pytree import tree_structure\ndef f(x):\n    s = tree_structure(x)\n"
     "    return s.children_specs\n", 4),
    ("import torch\nds = torch.utils.data.dataset.ConcatDataset([a, b])\nprint(ds.cummulative_sizes[-1])\n", 3),
])
def test_known_receivers_are_reported(lint, code, row):
    assert [f.row for f in findings_of(lint, code, "TP260")] == [row]


@pytest.mark.parametrize("code", [
    # the distribution is rebound in a loop: not known
    "import torch\nfor d in dists:\n    d.sample_n(3)\n",
    # another object's sample_n
    "import torch\nd = make_normal()\nd.sample_n(3)\n",
    # `spec` is the leaves' position in tree_flatten's tuple here, not the spec
    "from torch.utils._pytree import tree_flatten\nspec, leaves = tree_flatten(x)\nspec.children_specs\n",
    # a name bound in a function is not the module's name
    "import torch\nd = torch.distributions.Normal(0.0, 1.0)\ndef f(d):\n    return d.sample_n(3)\n",
])
def test_unknown_receivers_are_left_alone(lint, code):
    assert findings_of(lint, code, "TP260") == []


def test_sample_n_with_a_keyword_is_reported_without_a_fix(lint):
    code = "import torch\nd = torch.distributions.Normal(0.0, 1.0)\nx = d.sample_n(n=3)\n"
    [finding] = findings_of(lint, code, "TP260")
    assert finding.fix is None and "2.4" in finding.message


def test_children_specs_names_its_version(lint):
    code = "import torch.utils._pytree as pytree\nspec = pytree.TreeSpec(list, None, [])\nspec.children_specs\n"
    [finding] = findings_of(lint, code, "TP260", target="2.12")
    assert "PyTorch 2.10" in finding.message and finding.fix is None
