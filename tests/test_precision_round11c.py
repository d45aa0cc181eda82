"""Round 11, part c of issue #8's precision sample (OpenPCDet, ChatTTS, vits, Wav2Lip, SlowFast,
maskrcnn-benchmark, shap-e, consistency_models, nerf-pytorch snapshots): each false finding read on real
code, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- a removed name read only behind a feature probe of that very name --------------------------------
# (ChatTTS utils/io.py: ``if hasattr(torch.serialization, "FILE_LIKE"):`` then reads that alias, with
# fallbacks in elif/else. ``FILE_LIKE`` is in torch/serialization.py of the 2.4.1, 2.5.1 and 2.6.0 wheels
# and gone from 2.7.1 … 2.15.0, so the read runs only where the name exists.)

@pytest.mark.parametrize("source", [
    "import torch\nif hasattr(torch.serialization, 'FILE_LIKE'):\n    F = torch.serialization.FILE_LIKE\n"
    "else:\n    F = str\n",
    "import torch\nfrom torch import serialization\n"
    "if hasattr(serialization, 'FILE_LIKE') and x:\n    F = serialization.FILE_LIKE\n",
    "import torch\nF = torch.serialization.FILE_LIKE if hasattr(torch.serialization, 'FILE_LIKE') else str\n",
    "import torch\ndef f():\n    if hasattr(torch.serialization, 'FILE_LIKE'):\n"
    "        for _ in range(2):\n            return torch.serialization.FILE_LIKE\n",
])
def test_a_removed_name_inside_a_probe_of_itself_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP104", target="2.15", min_torch="2.4") == []


@pytest.mark.parametrize("source", [
    # no probe at all
    "import torch\nF = torch.serialization.FILE_LIKE\n",
    # a probe of another name
    "import torch\nif hasattr(torch, 'compile'):\n    F = torch.serialization.FILE_LIKE\n",
    # an ``or`` does not make sure the name exists
    "import torch\nif hasattr(torch.serialization, 'FILE_LIKE') or x:\n    F = torch.serialization.FILE_LIKE\n",
    # the probe's own test is not inside its body
    "import torch\nif torch.serialization.FILE_LIKE and hasattr(torch.serialization, 'FILE_LIKE'):\n    pass\n",
])
def test_a_removed_name_outside_its_own_probe_stays_reported(lint, source):
    assert len(findings_of(lint, source, "TP104", target="2.15", min_torch="2.4")) == 1
