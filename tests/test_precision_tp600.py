"""Hand-read precision cases for TP600: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 6d -----------------------------------------------------------------------------------
# Round 6, part d of issue #8's precision sample: each false finding (or wrong message) read on real packages,
# as a synthetic case of the same shape (no package code).


# -- an old-torchvision branch is compatibility code (lightning-bolts 0.7.0 retinanet_module) --------

@pytest.mark.parametrize("source", [
    # the flag imported from the project's own utils: judged by its name
    "from mypkg.utils import _TORCHVISION_LESS_THAN_0_13\nfrom torchvision.models import resnet50\n"
    "def build(flag):\n    if _TORCHVISION_LESS_THAN_0_13:\n        return resnet50(pretrained=flag)\n"
    "    return resnet50(weights='DEFAULT' if flag else None)\n",
    # the flag defined in the file with lightning's compare_version
    "import operator\nfrom lightning_utilities.core.imports import compare_version\n"
    "from torchvision.models import resnet50\n"
    "OLD_TV = compare_version('torchvision', operator.lt, '0.13.0')\n"
    "def build(flag):\n    if OLD_TV:\n        return resnet50(pretrained=flag)\n"
    "    return resnet50(weights='DEFAULT' if flag else None)\n",
    # torchvision.__version__ compared directly
    "import torchvision\nfrom packaging.version import Version\nfrom torchvision.models import resnet50\n"
    "def build(flag):\n    if Version(torchvision.__version__) < Version('0.13'):\n"
    "        return resnet50(pretrained=flag)\n    return resnet50(weights='DEFAULT' if flag else None)\n",
])
def test_old_torchvision_branch_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP600") == []


def test_pretrained_without_a_torchvision_check_is_still_reported(lint):
    source = ("from mypkg.utils import _TORCHVISION_AVAILABLE\nfrom torchvision.models import resnet50\n"
              "def build(flag):\n    if _TORCHVISION_AVAILABLE:\n        return resnet50(pretrained=flag)\n")
    assert len(findings_of(lint, source, "TP600")) == 1


# ---- round 7a -----------------------------------------------------------------------------------
# Round 7, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


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


# ---- round 9c -----------------------------------------------------------------------------------
# Round 9, part c of issue #8's precision sample: each false finding read on real packages, as a synthetic case
# of the same shape (no package code).


# -- try the weights= form, fall back to pretrained= -------------------------------------------------
# (torch-fidelity 0.4 utils_torchvision.py: `try: vgg16(weights=VGG16_Weights.IMAGENET1K_V1, ...)` /
# `except Exception: vgg16(pretrained=True, ...)`: the flag is the fallback for torchvision < 0.13.)

@pytest.mark.parametrize("handler", ["except Exception:", "except:", "except TypeError:"])
def test_pretrained_in_the_fallback_of_a_weights_call_is_not_reported(lint, handler):
    source = ("import torchvision\n\ndef load():\n    try:\n"
              "        return torchvision.models.vgg16(weights=torchvision.models.VGG16_Weights.IMAGENET1K_V1)\n"
              f"    {handler}\n        return torchvision.models.vgg16(pretrained=True)\n")
    assert findings_of(lint, source, "TP600") == []


def test_pretrained_with_an_alias_in_the_fallback_is_not_reported(lint):
    source = ("from torchvision.models import resnet50, ResNet50_Weights\n"
              "from torchvision import models\n\ntry:\n    net = resnet50(weights=ResNet50_Weights.DEFAULT)\n"
              "except Exception:\n    net = models.resnet50(pretrained=True)\n")
    assert findings_of(lint, source, "TP600") == []


@pytest.mark.parametrize("source", [
    # the try calls another builder: the fallback is not the old form of the same call
    "import torchvision\ntry:\n    net = torchvision.models.resnet18(weights=None)\n"
    "except Exception:\n    net = torchvision.models.vgg16(pretrained=True)\n",
    # the try has no weights= call at all
    "import torchvision\ntry:\n    net = load_local()\nexcept Exception:\n    net = torchvision.models.vgg16(pretrained=True)\n",
    # the old form in the try itself runs on every release
    "import torchvision\ntry:\n    net = torchvision.models.vgg16(pretrained=True)\n"
    "except Exception:\n    net = torchvision.models.vgg16(weights=None)\n",
])
def test_pretrained_outside_such_a_fallback_is_reported(lint, source):
    assert len(findings_of(lint, source, "TP600")) == 1


# ---- round 13c ----------------------------------------------------------------------------------
# Round 13, part c of issue #8's precision sample (ogb, openai jukebox with its vendored apex and tensorboardX,
# and co-tracker snapshots): 119 findings read, none false, no wrong safe fix. These tests keep shapes read
# there that sit next to compatibility-code detection or an unusual argument layout: each is a true finding (or
# a fix) whose surroundings are *not* a torch version check, so a guard that hid it, or a fix that moved an
# argument, would be a regression. Synthetic code of the same shape (no package code).


# -- torchvision's old pretrained flag passed by position ---------------------------------------------
# (tensorboardX demo: ``models.resnet18(False)``; torchvision 0.19.1's handle_legacy_interface maps a
# positional bool to the legacy flag and False to weights=None, so the safe fix writes exactly that.)

def test_positional_false_pretrained_flag_becomes_weights_none(lint):
    source = (
        "import torchvision.models as models\n"
        "net = models.resnet18(False)\n"
    )
    found = findings_of(lint, source, "TP600", target="2.15", min_torch="2.4")
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "safe"
    fixed = lint(source, fix=True, target="2.15", min_torch="2.4", select=["TP600"]).fixed_text
    assert fixed == "import torchvision.models as models\nnet = models.resnet18(weights=None)\n"
