"""Hand-read precision cases for the opt-in rules (TP9xx): each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 7b -----------------------------------------------------------------------------------
# Round 7, part b of issue #8's precision sample: each false finding (or wrong message) read on real packages,
# as a synthetic case of the same shape (no package code).


# -- TP903 (opt-in) on a log-sum-exp that already subtracts its shift (stanza 1.15.0 crf.log_sum_exp) --
# `m + log(sum(exp(x - m)))` is the stable form torch.logsumexp itself computes: with m the maximum,
# exp never sees a positive argument, so "overflows for large x" is false for it.

@pytest.mark.parametrize("source", [
    # the shift held in a local name, the maximum taken just before (the shape read in stanza)
    "import torch\ndef lse(scores, axis):\n    top, _ = torch.max(scores, dim=axis, keepdim=True)\n"
    "    shifted = scores - top\n    top = top.squeeze(axis)\n"
    "    return top + torch.log(torch.sum(torch.exp(shifted), dim=axis))\n",
    # the subtraction written inside exp, the shift added on the right
    "import torch\ndef lse(scores, top):\n    return torch.log(torch.sum(torch.exp(scores - top), 1)) + top\n",
])
def test_shifted_log_sum_exp_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP903", select=["TP903"]) == []


@pytest.mark.parametrize("source", [
    # added to something other than the subtracted shift: exp can still overflow
    "import torch\ndef lse(scores, top, bias):\n    return bias + torch.log(torch.sum(torch.exp(scores - top), 1))\n",
    # shifted but nothing added back: not the log-sum-exp identity, still the composed form
    "import torch\ndef lse(scores, top):\n    shifted = scores - top\n"
    "    return torch.log(torch.sum(torch.exp(shifted), 1))\n",
    # the plain composed form
    "import torch\ndef lse(scores):\n    return 1.0 + torch.log(torch.sum(torch.exp(scores), 1))\n",
])
def test_unshifted_log_sum_exp_is_still_reported(lint, source):
    assert len(findings_of(lint, source, "TP903", select=["TP903"])) == 1
