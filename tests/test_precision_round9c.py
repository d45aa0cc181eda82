"""Round 9, part c of issue #8's precision sample: each false finding read on real packages, as a
synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- a feature probe held in a function-local name ---------------------------------------------------
# (rfdetr 1.11 training/cuda_graph_step.py: the new function fetched with getattr(torch, ..., None) into
# a local, then `new(...) if local is not None else <old API>`: the old call runs only where the new
# function is missing, which no release from 2.4 is.)

_PROBE = '    get_dtype = getattr(torch, "get_autocast_dtype", None)\n'


@pytest.mark.parametrize("body", [
    _PROBE + '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n',
    _PROBE + '    return torch.get_autocast_gpu_dtype() if get_dtype is None else get_dtype("cuda")\n',
    _PROBE + '    if get_dtype is not None:\n        return get_dtype("cuda")\n    return torch.get_autocast_gpu_dtype()\n',
    _PROBE + '    if get_dtype is None:\n        return torch.get_autocast_gpu_dtype()\n    return get_dtype("cuda")\n',
    _PROBE + '    if get_dtype is not None:\n        dtype = get_dtype("cuda")\n'
             '    else:\n        dtype = torch.get_autocast_gpu_dtype()\n    return dtype\n',
])
def test_a_local_getattr_probe_guards_the_old_call(lint, body):
    source = "import torch\n\ndef autocast_dtype():\n" + body
    assert findings_of(lint, source, "TP243") == []


def test_a_module_level_getattr_probe_guards_the_old_call(lint):
    source = ('import torch\nGET_DTYPE = getattr(torch, "get_autocast_dtype", None)\n\ndef autocast_dtype():\n'
              '    return GET_DTYPE("cuda") if GET_DTYPE is not None else torch.get_autocast_gpu_dtype()\n')
    assert findings_of(lint, source, "TP243") == []


@pytest.mark.parametrize("body", [
    # the name is also a parameter: the test says nothing about torch
    "def autocast_dtype(get_dtype=None):\n" + _PROBE.replace("get_dtype =", "get_dtype = get_dtype or") +
    '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n',
    # rebound to something else in the function
    "def autocast_dtype(flag):\n" + _PROBE + "    if flag:\n        get_dtype = None\n"
    '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n',
    # a getattr with a default other than None is never None
    'def autocast_dtype():\n    get_dtype = getattr(torch, "get_autocast_dtype", print)\n'
    '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n',
    # a getattr of something that is not torch
    'def autocast_dtype(obj):\n    get_dtype = getattr(obj, "get_autocast_dtype", None)\n'
    '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n',
    # the old call on the branch where the probe found the new function
    "def autocast_dtype():\n" + _PROBE + "    if get_dtype is not None:\n"
    "        return torch.get_autocast_gpu_dtype()\n    return None\n",
])
def test_a_none_test_that_is_no_probe_keeps_the_finding(lint, body):
    source = "import torch\n\n" + body
    assert len(findings_of(lint, source, "TP243")) == 1


def test_a_local_probe_does_not_reach_another_function(lint):
    source = ("import torch\n\ndef probe():\n" + _PROBE + "    return get_dtype\n\n"
              "def autocast_dtype(get_dtype):\n"
              '    return get_dtype("cuda") if get_dtype is not None else torch.get_autocast_gpu_dtype()\n')
    assert len(findings_of(lint, source, "TP243")) == 1


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
