"""Hand-read precision cases of round 16 (bench/trust_samples/sample16a.tsv): false alarms of the new default
findings on code bases no earlier pass used, each with the shape it came from."""

from __future__ import annotations

from precision_helpers import findings_of


def test_kldivloss_with_legacy_size_average_and_reduce_false_does_not_warn_about_mean(lint):
    # self-critical.pytorch captioning/modules/losses.py: legacy_get_string(False, False) is 'none' (2.4-2.15
    # _Loss.__init__), so forward never reaches the reduction == 'mean' warning; TP216 keeps its fix.
    source = ("import torch.nn as nn\n\nclass LabelSmoothing(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.criterion = nn.KLDivLoss(size_average=False, reduce=False)\n\n"
              "    def forward(self, x, y):\n        return self.criterion(x, y).sum(1)\n")
    assert findings_of(lint, source, "TP209") == []
    [legacy] = findings_of(lint, source, "TP216")
    assert legacy.fix is not None and "reduction='none'" in legacy.message


def test_kldivloss_with_legacy_size_average_true_still_warns_about_mean(lint):
    source = ("import torch.nn as nn\ncriterion = nn.KLDivLoss(size_average=True)\nloss = criterion(p, q)\n")
    assert [f.row for f in findings_of(lint, source, "TP209")] == [2, 3]


def test_legacy_loss_flags_from_variables_leave_the_reduction_unknown(lint):
    source = ("import torch.nn as nn\ncriterion = nn.KLDivLoss(size_average=avg)\nloss = criterion(p, q)\n")
    assert findings_of(lint, source, "TP209") == []


def test_super_init_forwarding_a_none_default_parameter_is_not_reported(lint):
    # sentiment-discovery model/sentiment_classifier.py: MultiHeadBCELoss(weight=None, size_average=None, ...)
    # passes its own None defaults on; torch tests `size_average is not None`, and no caller passes one.
    source = ("import torch\n\nclass MultiHeadBCELoss(torch.nn.BCELoss):\n"
              "    def __init__(self, weight=None, size_average=None, reduce=None, reduction='mean', heads=1):\n"
              "        super(MultiHeadBCELoss, self).__init__(weight=weight, size_average=size_average, reduce=reduce,"
              " reduction=reduction)\n        self.heads = heads\n\n"
              "class MultiHeadCE(torch.nn.CrossEntropyLoss):\n"
              "    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None):\n"
              "        super().__init__(weight=weight, size_average=size_average, reduce=reduce, ignore_index=ignore_index)\n")
    assert findings_of(lint, source, "TP209") == []


def test_super_init_forwarding_a_true_default_is_still_reported(lint):
    source = ("import torch\n\nclass SumMSE(torch.nn.MSELoss):\n    def __init__(self, size_average=True):\n"
              "        super().__init__(size_average=size_average)\n")
    assert [f.row for f in findings_of(lint, source, "TP209")] == [5]
