"""Hand-read recall cases of round 15 (bench/trust_samples/recall15a.tsv) that needed new rules: TP131
legacy-autograd-function (ssd.pytorch's Detect, faster-rcnn's ROI functions, CenterNet's DCNv2) and TP245
meshgrid-without-indexing (torchrec metrics/xauc.py, deepspeech's sparse_image_warp.py)."""

from __future__ import annotations

from precision_helpers import findings_of

_DETECT = ("import torch\nfrom torch.autograd import Function\n\nclass Detect(Function):\n"
           "    def __init__(self, num_classes, top_k):\n        self.num_classes = num_classes\n        self.top_k = top_k\n\n"
           "    def forward(self, loc_data, conf_data):\n        return loc_data\n\n"
           "class SSD(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.detect = Detect(21, 200)\n")


def test_legacy_function_with_instance_forward_is_reported_once_per_class(lint):
    [finding] = findings_of(lint, _DETECT, "TP131")
    assert finding.row == 4 and "Detect.apply" in finding.message


def test_new_style_and_classmethod_functions_are_not_reported(lint):
    source = ("import torch\nfrom torch import autograd\n\nclass Swish(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x):\n        return x\n\nclass Sync(autograd.Function):\n    @classmethod\n"
              "    def forward(cls, ctx, x):\n        return x\n")
    assert findings_of(lint, source, "TP131") == []


def test_meshgrid_in_a_loop_without_indexing_is_reported_with_a_safe_fix(lint):
    source = ("import torch\n\ndef xauc(predictions, labels):\n    for p, l in zip(predictions, labels):\n"
              "        px, py = torch.meshgrid(p, p)\n        lx, ly = torch.meshgrid(l, l)\n")
    findings = findings_of(lint, source, "TP245")
    assert [f.row for f in findings] == [5, 6]
    assert all(f.fix is not None and f.fix.applicability == "safe" for f in findings)


def test_meshgrid_guarded_by_a_version_check_is_not_reported(lint):
    source = ("import torch\nfrom packaging import version\nTORCH_1_10 = version.parse(torch.__version__) >= version.parse('1.10')\n"
              "def grid(y, x):\n    return torch.meshgrid(y, x, indexing='ij') if TORCH_1_10 else torch.meshgrid(y, x)\n")
    assert findings_of(lint, source, "TP245") == []


def test_a_forward_ctx_without_staticmethod_and_no_init_is_not_reported(lint):
    # apply() calls forward as a plain function of the class, so this works on 2.13 (checked); only the legacy
    # shape (an __init__, or forward(self, ...)) is the one whose instances are called.
    source = ("import torch\n\nclass Twice(torch.autograd.Function):\n    def forward(ctx, x):\n        return x * 2\n\n"
              "y = Twice.apply(torch.ones(2))\n")
    assert findings_of(lint, source, "TP131") == []
