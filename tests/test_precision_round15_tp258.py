"""Hand-read recall case of round 15 (bench/trust_samples/recall15a.tsv) for TP258 scalar-first-overload: the
optimizer shape ``grad = grad.add(group["weight_decay"], p.data)`` (dlrm optim/rwsadagrad.py) was missed because
the generic ``add`` was reported only with a numeric scalar."""

from __future__ import annotations

from precision_helpers import findings_of

_OPTIMIZER = ("import torch\n\nclass RowWiseAdagrad(torch.optim.Optimizer):\n    def step(self):\n"
              "        for group in self.param_groups:\n            for p in group['params']:\n"
              "                grad = p.grad\n                if group['weight_decay'] != 0:\n"
              "                    grad = grad.add(group['weight_decay'], p.data)\n")


def test_param_group_scalar_with_a_data_tensor_is_reported_and_fixed(lint):
    [finding] = findings_of(lint, _OPTIMIZER, "TP258")
    assert finding.fix is not None
    result = lint(_OPTIMIZER, fix=True)
    assert "grad.add(p.data, alpha=group['weight_decay'])" in result.fixed_text, result.fixed_text


def test_a_generic_add_of_two_names_is_still_not_reported(lint):
    source = "import torch\n\ndef build(graph, node, parent):\n    graph.add(node, parent)\n    graph.add(node['k'], parent.child)\n"
    assert findings_of(lint, source, "TP258") == []
