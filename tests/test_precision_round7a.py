"""Round 7, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding)
read on real packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- assigning to a deprecated torch function is a monkeypatch, not a use (sd-scripts library/ipex) ----

@pytest.mark.parametrize(("source", "code"), [
    ("import torch\ndef hijack(xpu):\n    torch.cuda.memory_cached = xpu.memory_reserved\n", "TP201"),
    ("import torch\ndef hijack(xpu):\n    torch.cuda.max_memory_cached = xpu.max_memory_reserved\n", "TP201"),
    ("import torch\nimport contextlib\ndef hijack():\n"
     "    torch.backends.cuda.sdp_kernel = contextlib.nullcontext\n", "TP204"),
    ("import torch\ndef unhook():\n    del torch.cuda.memory_cached\n", "TP201"),
    # memory_cached became an API-table rename (TP201, which skips stores too); a name only the wheel
    # data knows keeps the TP206 case.
    ("import torch\ndef hijack(f):\n    torch.autograd.gradcheck.get_numerical_jacobian = f\n", "TP206"),
])
def test_assigning_a_deprecated_function_is_not_reported(lint, source, code):
    assert findings_of(lint, source, code) == []


@pytest.mark.parametrize(("source", "code"), [
    # the deprecated function read (to call, or to keep for later) is still a use
    ("import torch\ndef report():\n    return torch.cuda.memory_cached()\n", "TP201"),
    ("import torch\nkeep = torch.cuda.memory_cached\n", "TP201"),
    ("import torch\ndef hijack(xpu):\n    xpu.memory_cached = torch.cuda.memory_cached\n", "TP201"),
    ("import torch\nkeep = torch.autograd.gradcheck.get_numerical_jacobian\n", "TP206"),
    ("import torch\nkernel = torch.backends.cuda.sdp_kernel\n", "TP204"),
])
def test_reading_a_deprecated_function_is_still_reported(lint, source, code):
    assert len(findings_of(lint, source, code)) == 1


# -- a weights enum passed by position is not `pretrained` (sd-scripts gen_img_diffusers) --------------

def test_weights_enum_by_position_says_weights_not_pretrained(lint):
    source = "import torchvision\nmodel = torchvision.models.vgg16(torchvision.models.VGG16_Weights.IMAGENET1K_V1)\n"
    [finding] = findings_of(lint, source, "TP600")
    assert "`pretrained`" not in finding.message
    assert "by position" in finding.message and "`weights=`" in finding.message


def test_weights_enum_by_position_gets_the_keyword_as_a_safe_fix(lint):
    source = ("from torchvision.models import resnet50, ResNet50_Weights\n"
              "model = resnet50(ResNet50_Weights.IMAGENET1K_V1)\n")
    result = lint(source, fix=True)
    assert result.error is None, result.error
    assert "resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)" in result.fixed_text


def test_bool_by_position_is_still_called_pretrained(lint):
    source = "import torchvision\nmodel = torchvision.models.vgg16(True)\n"
    [finding] = findings_of(lint, source, "TP600")
    assert "`pretrained`" in finding.message


# -- a pin with a local version label (cleanrl requirements-memory_gym.txt) ---------------------------

@pytest.mark.parametrize("text", ["torch==2.7.1+cu118\n", "numpy\ntorch==2.5.1+cpu  # via uv\n"])
def test_vulnerable_pin_with_a_local_label_is_reported(lint, text):
    assert len(findings_of(lint, text, "TP304", name="requirements.txt")) == 1


def test_fixed_pin_with_a_local_label_is_not_reported(lint):
    assert findings_of(lint, "torch==2.10.0+cu126\n", "TP304", name="requirements.txt") == []


def test_min_torch_from_a_pin_with_a_local_label(tmp_path):
    from torchpatch.engine.config import min_torch_from_pins

    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.7.1+cu118\n", encoding="utf-8")
    version, where = min_torch_from_pins(tmp_path)
    assert str(version) == "2.7" and where == "requirements.txt"


# -- a fix lists each edit once (Mask2Former demo_video/demo.py: `import torch` was listed twice) ------

def test_fix_lists_the_import_it_adds_once(lint):
    source = ("import os\nfrom torch.cuda.amp import autocast\n\n"
              "def run(model, frames):\n    with autocast():\n        return model(frames)\n")
    [finding] = findings_of(lint, source, "TP202")
    edits = [(edit.start, edit.end, edit.content) for edit in finding.fix.edits]
    assert len(edits) == len(set(edits)), edits
