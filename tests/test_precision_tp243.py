"""Hand-read precision cases for TP243 autocast-device-state: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 9c -----------------------------------------------------------------------------------
# Round 9, part c of issue #8's precision sample: each false finding read on real packages, as a synthetic case
# of the same shape (no package code).


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
