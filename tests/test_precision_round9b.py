"""Round 9, part b of issue #8's precision sample: each wrong message (or false finding) read on real
packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- `torch.svd(A, compute_uv=False)` asks only for the singular values ----------------------------------
# (demucs 4.1.0 svd.py: the largest squared singular value of a weight matrix as a penalty). torch.svd's
# own docstring (2.4.1 and 2.15.0 `_torch_docs.py`) says that form "should be replaced with
# `S = torch.linalg.svdvals(A)`"; pointing to `linalg.svd` and its `Vh` sends the reader the wrong way.

@pytest.mark.parametrize("call", [
    "torch.svd(w, compute_uv=False)[1]",
    "torch.svd(w, some=True, compute_uv=False)[1]",
    "torch.svd(w, True, False)[1]",
])
def test_svd_without_u_and_v_points_to_svdvals(lint, call):
    findings = findings_of(lint, f"import torch\nsigma = {call}.max()\n", "TP251")
    assert len(findings) == 1
    message = findings[0].message
    assert "`torch.linalg.svdvals(A)`" in message
    assert "Vh" not in message
    assert findings[0].fix is None


@pytest.mark.parametrize("call", [
    "torch.svd(w)",
    "torch.svd(w, compute_uv=True)",
    "torch.svd(w, some=False)",
    "torch.svd(w, compute_uv=flag)",  # not a literal: either form may run
])
def test_svd_with_u_and_v_keeps_the_linalg_svd_advice(lint, call):
    findings = findings_of(lint, f"import torch\nU, S, V = {call}\n", "TP251")
    assert len(findings) == 1
    assert "`torch.linalg.svd(A, full_matrices=not some)`" in findings[0].message
    assert "svdvals" not in findings[0].message
