"""Round 8, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding)
read on real packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- `name is None` after a guarded import probes availability; it does not use the deprecated API -----
# (sparseml 1.8 pytorch/utils/module.py: amp names imported in try/except, tested for None before use)

_GUARDED_AMP = ("try:\n    from torch.cuda.amp import GradScaler, autocast\nexcept ImportError:\n"
                "    GradScaler = None\n    autocast = None\n")


@pytest.mark.parametrize(("source", "code"), [
    (_GUARDED_AMP + "def check():\n    if autocast is None or GradScaler is None:\n        raise RuntimeError\n",
     "TP202"),
    (_GUARDED_AMP + "AMP = GradScaler is not None\n", "TP202"),
    ("import torch\nif None is torch.cuda.amp.autocast:\n    pass\n", "TP202"),
    ("try:\n    from torch.cpu.amp import autocast\nexcept ImportError:\n    autocast = None\n"
     "HAS = autocast is not None\n", "TP203"),
    ("try:\n    from torch.utils._pytree import _register_pytree_node\nexcept ImportError:\n"
     "    _register_pytree_node = None\nif _register_pytree_node is not None:\n    pass\n", "TP205"),
    ("import torch\nif torch.jit.script is None:\n    pass\n", "TP210"),
])
def test_a_none_test_of_a_deprecated_name_is_not_reported(lint, source, code):
    assert findings_of(lint, source, code) == []


@pytest.mark.parametrize(("source", "code", "count"), [
    # the uses next to the probe are still reported
    (_GUARDED_AMP + "def run(use):\n    if autocast is None:\n        raise RuntimeError\n"
     "    scaler = GradScaler()\n    ctx = autocast if use else None\n", "TP202", 2),
    # compared with something else than None: a use
    ("import torch\nSAME = torch.cuda.amp.autocast is torch.amp.autocast\n", "TP202", 1),
    ("import torch\nkeep = torch.jit.script\nif keep is None:\n    pass\n", "TP210", 1),
    # a None test of a call's result still has the call
    ("import torch\nif torch.jit.script(f) is None:\n    pass\n", "TP210", 1),
])
def test_uses_beside_a_none_test_are_still_reported(lint, source, code, count):
    assert len(findings_of(lint, source, code)) == count
