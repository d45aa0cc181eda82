"""TP243: the per-device autocast state functions, checked against real torch."""

from __future__ import annotations

import warnings

import pytest

from torchpatch.rules.autocast_device_state import REPLACEMENTS


@pytest.mark.torch
def test_each_old_function_warns_and_shares_state_with_its_replacement():
    torch = pytest.importorskip("torch")
    dtypes = {"cuda": torch.float16, "cpu": torch.bfloat16, "xla": torch.bfloat16, "ipu": torch.float16}
    for old, (new, device, takes) in REPLACEMENTS.items():
        old_function = getattr(torch, old.rpartition(".")[2])
        new_function = getattr(torch, new.rpartition(".")[2])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if takes:
                value = dtypes[device] if "dtype" in old else False
                old_function(value)
                read_back = (torch.get_autocast_dtype(device) if "dtype" in old
                             else torch.is_autocast_enabled(device))
                assert read_back == value, old
                new_function(device, value)
            else:
                assert old_function() == new_function(device), old
        assert any(issubclass(w.category, DeprecationWarning) and "is deprecated" in str(w.message) for w in caught), old
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.is_autocast_cpu_enabled() is torch.is_autocast_enabled("cpu") is True
            assert torch.get_autocast_cpu_dtype() == torch.get_autocast_dtype("cpu") == torch.bfloat16


def test_value_uses_and_odd_calls_get_no_fix(lint):
    code = ("import torch\nread = torch.get_autocast_gpu_dtype\n"
            "torch.set_autocast_cpu_dtype(*args)\ntorch.set_autocast_gpu_dtype(dtype=torch.half)\n")
    findings = lint(code, select=["TP243"]).findings
    assert [(f.row, f.fix) for f in findings] == [(2, None), (3, None), (4, None)]


def test_messages_name_the_device_type(lint):
    (finding,) = lint("import torch\nd = torch.get_autocast_gpu_dtype()\n", select=["TP243"]).findings
    assert 'torch.get_autocast_dtype("cuda")' in finding.message and "2.4" in finding.message
    assert finding.fix.message == 'Replace with `torch.get_autocast_dtype("cuda")`'  # takes no other argument
    (setter,) = lint("import torch\ntorch.set_autocast_cpu_dtype(torch.bfloat16)\n", select=["TP243"]).findings
    assert setter.fix.message == 'Replace with `torch.set_autocast_dtype("cpu", ...)`'
