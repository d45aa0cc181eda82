"""TP244's claims about real torch: `torch.cross` without `dim` warns, and its default is not `dim=-1`."""

from __future__ import annotations

import warnings

import pytest


@pytest.mark.torch
def test_cross_without_dim_warns_and_with_dim_does_not() -> None:
    torch = pytest.importorskip("torch")
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cross(a, b, dim=-1)
        torch.linalg.cross(a, b)
    assert not [w for w in caught if "torch.cross" in str(w.message)]
    # TORCH_WARN_ONCE: the first call without dim in the process warns (a subprocess keeps this test
    # independent of whatever else ran torch.cross before).
    import subprocess
    import sys

    probe = ("import warnings, torch\nwarnings.simplefilter('always')\n"
             "torch.cross(torch.randn(4, 3), torch.randn(4, 3))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Using torch.cross without specifying the dim arg is deprecated" in result.stderr


@pytest.mark.torch
def test_default_dim_is_the_first_of_size_three_not_the_last() -> None:
    """What the message says: a (3, 3) batch of row vectors is crossed along dim 0, not -1."""
    torch = pytest.importorskip("torch")
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = torch.cross(a, b)
    assert torch.equal(default, torch.cross(a, b, dim=0))
    assert not torch.allclose(default, torch.linalg.cross(a, b))
