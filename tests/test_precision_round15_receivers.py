"""Hand-read recall cases of round 15 (bench/trust_samples/recall15a.tsv) for the receiver inference of
TP224 tensor-storage-method: ``self.scores.storage()`` in a meter whose ``reset`` sets
``self.scores = torch.FloatTensor(torch.FloatStorage())`` (pretrained-models datasets/utils.py) was left to
the opt-in TP906, as an unknown receiver."""

from __future__ import annotations

from precision_helpers import findings_of

_METER = ("import torch\n\nclass Meter:\n    def reset(self):\n"
          "        self.scores = torch.FloatTensor(torch.FloatStorage())\n        self.buf = torch.zeros(3)\n"
          "        self.other = torch.zeros(3)\n\n    def load(self, x):\n        self.other = x\n\n"
          "    def add(self):\n        a = self.scores.storage().size()\n        b = self.buf.storage()\n"
          "        c = self.other.storage()\n        return a, b, c\n")


def test_self_attribute_set_only_to_tensors_is_a_tensor(lint):
    rows = sorted(f.row for f in findings_of(lint, _METER, "TP224"))
    assert rows == [13, 14], rows


def test_self_attribute_also_set_from_an_argument_is_unknown(lint):
    assert 15 not in [f.row for f in findings_of(lint, _METER, "TP224")]
    assert [f.row for f in findings_of(lint, _METER, "TP906", select=["TP906"])] == [15]


def test_self_attribute_outside_a_class_or_unpacked_is_unknown(lint):
    source = ("import torch\n\nclass A:\n    def reset(self):\n        self.x, self.y = torch.zeros(2), torch.zeros(2)\n\n"
              "    def use(self):\n        return self.x.storage()\n")
    assert findings_of(lint, source, "TP224") == []
