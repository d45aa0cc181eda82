"""Hand-read precision cases for TP251: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 6a -----------------------------------------------------------------------------------
# Round 6, part a of issue 8's hand-read sample: each case is a finding that was wrong on real code. The code
# here is written for the test (same shape as the real code, not a copy of it).


# -- TP251: one upper release in the message ---------------------------------------------------------

def test_svd_message_names_the_newest_release(lint):
    # torch.svd has no runtime warning in the 2.15.0 wheel either (libtorch_cpu.so holds "torch.lu is
    # deprecated" but no such string for svd); the message named 2.13 as the last release checked.
    result = lint("import torch\nu, s, v = torch.svd(a, some=False)\n", select=["TP251"])
    (finding,) = result.findings
    assert "no runtime warning in 2.4 through 2.15" in finding.message


# ---- round 6b -----------------------------------------------------------------------------------
# Issue 8, round 6, sample b (detectron2, pytorch3d, apex): mistakes found by reading real findings.


def test_svd_message_names_the_newest_release_with_the_default_rules(lint):
    """pytorch3d ops/cameras_alignment.py: `torch.svd` is documented as deprecated with no warning in any
    release torchpatch knows (the 2.15.0 libtorch has `torch.lu`'s deprecation text, none for svd); the
    message said "through 2.13"."""
    [finding] = lint("import torch\nU, S, V = torch.svd(A)\n", target="2.15", min_torch="2.4").findings
    assert finding.code == "TP251"
    assert "no runtime warning in 2.4 through 2.15" in finding.message


# ---- round 9b -----------------------------------------------------------------------------------
# Round 9, part b of issue #8's precision sample: each wrong message (or false finding) read on real packages,
# as a synthetic case of the same shape (no package code).


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
