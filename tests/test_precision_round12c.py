"""Round 12, part c of issue #8's precision sample (executorch, botorch, GroundingDINO,
segmentation_models.pytorch and gpytorch snapshots): 128 findings read, none false. These tests keep the
shapes read there that sit next to compatibility-code detection reported: each is a true finding whose
surrounding ``try``/``if``/``with`` is *not* a torch version check or feature probe, so a guard that
hid it would hide a real problem. Synthetic code of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- a keyword removed from ExportedProgram, through a module alias ---------------------------------------
# (executorch exir/serde: ``import torch.export.exported_program as ep`` then
# ``ep.ExportedProgram(..., verifier=...)``; 2.4.1's __init__ takes ``verifier``, 2.5.1 … 2.15.0 only the
# keyword-only ``verifiers``, so the call raises TypeError on 2.5+.)

def test_exported_program_verifier_keyword_through_a_module_alias_is_reported(lint):
    source = (
        "import torch.export.exported_program as ep\n"
        "def build(gm, sig, sd, rc, mcg, v):\n"
        "    return ep.ExportedProgram(root=gm, graph=gm.graph, graph_signature=sig, state_dict=sd,\n"
        "                              range_constraints=rc, module_call_graph=mcg, verifier=v)\n"
    )
    found = findings_of(lint, source, "TP105", target="2.15", min_torch="2.4")
    assert len(found) == 1 and "verifier" in found[0].message and "2.5" in found[0].message


# -- deprecated calls under tests and flags that are not version checks -----------------------------------

def test_jit_script_expected_to_fail_inside_assert_raises_is_reported(lint):
    # (smp tests: ``with self.assertRaises(RuntimeError): torch.jit.script(model)`` for models that are not
    # scriptable: still a call of the TorchScript entry point deprecated from 2.10.)
    source = (
        "import torch\n"
        "class T:\n"
        "    def test_script(self, model):\n"
        "        if not model.scriptable:\n"
        "            with self.assertRaises(RuntimeError):\n"
        "                torch.jit.script(model)\n"
        "            return\n"
        "        torch.jit.script(model)\n"
    )
    assert [f.row for f in findings_of(lint, source, "TP210", target="2.15", min_torch="2.4")] == [6, 8]


def test_check_is_size_under_a_dynamic_shape_flag_is_reported(lint):
    # (executorch llama attention: ``if self.enable_dynamic_shape:`` is a model option, not a version.)
    source = (
        "import torch\n"
        "def update(self, input_pos):\n"
        "    if self.enable_dynamic_shape:\n"
        "        start = input_pos[0].item()\n"
        "        torch._check_is_size(start)\n"
        "        torch._check(start < self.max_len)\n"
    )
    found = findings_of(lint, source, "TP233", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [5]
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"


def test_quantize_per_tensor_under_a_dtype_test_is_reported(lint):
    # (executorch cadence reference kernels: ``if dtype in qdtype_map:`` picks torch's quantized dtypes;
    # a dtype test, not a version check. The quantized-dtype UserWarning is raised from 2.13.)
    source = (
        "import torch\n"
        "QDTYPES = {1: torch.qint8}\n"
        "def requantize(x, scale, zp, dtype):\n"
        "    if dtype in QDTYPES:\n"
        "        return torch.quantize_per_tensor(torch.dequantize(x), scale, zp, QDTYPES[dtype])\n"
        "    return x\n"
    )
    found = findings_of(lint, source, "TP201", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [5] and "2.13" in found[0].message
