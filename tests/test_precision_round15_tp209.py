"""Hand-read precision cases of round 15 (bench/trust_samples/sample15a.tsv) for TP209 warned-argument:
each false finding read on real code, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

from precision_helpers import findings_of


# -- a project that overrides state_dict(destination, prefix, keep_vars) forwards positionally to its own
# overrides (torchrec embedding_lookup.py / embeddingbag.py: kernels whose state_dict is torchrec's) ----------

_FORWARDING = (
    "from collections import OrderedDict\nimport torch\nfrom torch import nn\n\n"
    "class Lookup(nn.Module):\n    def __init__(self, kernels):\n        super().__init__()\n"
    "        self._kernels = nn.ModuleList(kernels)\n\n"
    "    def state_dict(self, destination=None, prefix='', keep_vars=False):\n"
    "        if destination is None:\n            destination = OrderedDict()\n"
    "        for kernel in self._kernels:\n            kernel.state_dict(destination, prefix, keep_vars)\n"
    "        return destination\n")


def test_positional_state_dict_in_a_file_with_its_own_override_is_not_reported(lint):
    assert findings_of(lint, _FORWARDING, "TP209") == []


def test_a_keyword_only_override_does_not_hide_the_positional_call(lint):
    source = ("import torch\n\nclass Wrapper(torch.nn.Module):\n"
              "    def state_dict(self, *args, **kwargs):\n        return super().state_dict(**kwargs)\n\n"
              "def save(model, d):\n    return model.state_dict(d, 'm.')\n")
    [finding] = findings_of(lint, source, "TP209")
    assert "Positional args are being deprecated" in finding.message


def test_positional_state_dict_without_an_override_is_still_reported(lint):
    source = "import torch\n\ndef save(model, d):\n    return model.state_dict(d, 'm.')\n"
    [finding] = findings_of(lint, source, "TP209")
    assert "Positional args are being deprecated" in finding.message


def test_a_known_torch_module_is_reported_even_beside_an_override(lint):
    source = _FORWARDING + "\nlin = torch.nn.Linear(2, 2)\nsd = lin.state_dict({}, 'p.')\n"
    findings = findings_of(lint, source, "TP209")
    assert [f.row for f in findings] == [_FORWARDING.count("\n") + 3], findings
