"""Round 11, part a of issue #8's precision sample (git snapshots of TorchServe, wenet and swav): each
false finding (or wrong message, or missed finding) read on real code, as a synthetic case of the same
shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP410's `dynamic_axes` hint on an explicit `dynamic_axes=None` -----------------------------------
# (wenet's BPU export passes `dynamic_axes=None` to `torch.onnx.export`. None is the parameter's default:
# torch 2.9-2.15's torch.export-based path (`onnx/_internal/exporter/_compat.py`) only warns about and
# converts a `dynamic_axes` that is not None, so "use `dynamic_shapes` with dynamo=True" is wrong there.)

def test_dynamic_axes_none_gets_no_dynamic_shapes_hint(lint):
    source = ("import torch\n"
              "torch.onnx.export(model, (x,), 'm.onnx', opset_version=11, dynamic_axes=None)\n")
    [finding] = findings_of(lint, source, "TP410", target="2.15", min_torch="2.4")
    assert "without `dynamo=`" in finding.message
    assert "dynamic_axes" not in finding.message


@pytest.mark.parametrize("value", ["{'x': {0: 'batch'}}", "axes"])
def test_a_real_dynamic_axes_keeps_the_hint(lint, value):
    source = f"import torch\ntorch.onnx.export(model, (x,), 'm.onnx', dynamic_axes={value})\n"
    [finding] = findings_of(lint, source, "TP410", target="2.15", min_torch="2.4")
    assert "`dynamic_axes` is meant for `dynamo=False`" in finding.message
