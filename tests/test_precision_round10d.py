"""Round 10, part d of issue #8's precision sample: each finding read on real code whose verdict needed a
change to torchpatch, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP201 on `torch.testing.assert_allclose`: the note must name the mixed-type failure ------------------
# (detr's test_all.py compares a model output tensor with an onnxruntime NumPy array inside
# `try: ... except AssertionError:`. `assert_allclose` turns a non-tensor into one with `torch.tensor` (2.4.1 and
# 2.15.0 `torch/testing/_comparison.py`); `assert_close` raises TypeError "No comparison pair was able to handle
# inputs" for a tensor against an ndarray, list or number, which that `except` does not catch. The note only
# named dtype/device/layout and tolerances, so its advice (`check_dtype=False`, `rtol`/`atol`) misled here.)

_ASSERT_ALLCLOSE = (
    "import torch\n\n"
    "def check(out, reference):\n"
    "    try:\n"
    "        torch.testing.assert_allclose(out, reference, rtol=1e-03, atol=1e-05)\n"
    "    except AssertionError:\n"
    "        pass\n"
)


def test_assert_allclose_note_names_the_mixed_type_type_error(lint):
    (finding,) = findings_of(lint, _ASSERT_ALLCLOSE, "TP201")
    assert "TypeError" in finding.message
    assert "NumPy array" in finding.message
    assert "torch.tensor`" in finding.message  # how assert_allclose converts (2.4.1, 2.15.0)
    # what was already said stays said
    assert "check_dtype=False" in finding.message
    assert "per-dtype tolerances" in finding.message


def test_assert_allclose_fix_stays_unsafe(lint):
    result = lint(_ASSERT_ALLCLOSE)
    (finding,) = [f for f in result.findings if f.code == "TP201"]
    assert finding.fix is not None and finding.fix.applicability == "unsafe"


@pytest.mark.torch
def test_assert_close_refuses_a_tensor_against_a_numpy_array():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    import warnings

    actual = torch.ones(3)
    expected = np.ones(3, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.testing.assert_allclose(actual, expected, rtol=1e-03, atol=1e-05)  # converts: passes
    with pytest.raises(TypeError):
        torch.testing.assert_close(actual, expected, rtol=1e-03, atol=1e-05)
