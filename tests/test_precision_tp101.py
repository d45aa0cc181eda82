"""Hand-read precision cases for TP101 removed-api: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 6b -----------------------------------------------------------------------------------
# Issue 8, round 6, sample b (detectron2, pytorch3d, apex): mistakes found by reading real findings.


# detectron2 02b5c4e2 tests/test_export_onnx.py: a removed function called alone in a ``try`` whose
# handler catches the AttributeError its removal raises runs where the name exists and is skipped
# where it does not; it breaks nothing on any release (torch.onnx.enable_log: in 2.4.1 and 2.5.1,
# without a warning; gone in 2.6.0).
TOLERATED = {
    "attribute-except-pass": "import torch\ntry:\n    torch.onnx.enable_log()\nexcept AttributeError:\n    pass\n",
    "attribute-in-tuple": "import torch\ndef f():\n    try:\n        torch.onnx.disable_log()\n"
                          "    except (AttributeError, RuntimeError):\n        pass\n",
    "broad-except": "import torch\ntry:\n    torch.onnx.enable_log()\nexcept Exception:\n    pass\n",
}


UNTOLERATED = {
    # The handler does not catch what the removal raises.
    "other-exception": "import torch\ntry:\n    torch.onnx.enable_log()\nexcept RuntimeError:\n    pass\n",
    # More work in the try: on 2.6+ the statements after the removed call are silently skipped.
    "longer-body": "import torch\ntry:\n    torch.onnx.enable_log()\n    export(model)\nexcept AttributeError:\n    pass\n",
    "no-try": "import torch\ntorch.onnx.enable_log()\n",
}


@pytest.mark.parametrize("code", TOLERATED.values(), ids=TOLERATED.keys())
def test_removed_name_alone_in_a_try_that_catches_its_absence_is_compatibility_code(lint, code):
    assert [f.code for f in lint(code, target="2.15", min_torch="2.4").findings] == []


@pytest.mark.parametrize("code", UNTOLERATED.values(), ids=UNTOLERATED.keys())
def test_removed_name_outside_such_a_try_is_still_reported(lint, code):
    assert [f.code for f in lint(code, target="2.15", min_torch="2.4").findings] == ["TP101"]


def test_a_removal_that_warned_first_is_still_reported_in_such_a_try(lint):
    """A row deprecated before its removal warns on the releases that still have it: the try hides no
    warning, so the finding stays."""
    from torchpatch.rules.api_table import rows_where

    warned = [row for row in rows_where(removed=True).values()
              if row.deprecated_in is not None and row.deprecated_in < row.removed_in
              and row.kind != "module" and row.old.count(".") >= 2 and row.example]
    assert warned, "the API table has rows deprecated before their removal"
    row = warned[0]
    code = f"import torch\ntry:\n    {row.old}\nexcept AttributeError:\n    pass\n"
    code = code.replace(f"    {row.old}\n", f"    x = {row.old}()\n")
    found = lint(code, target="2.15", min_torch=str(row.deprecated_in)).findings
    assert "TP101" in [f.code for f in found]


# ---- round 6d -----------------------------------------------------------------------------------
# Round 6, part d of issue #8's precision sample: each false finding (or wrong message) read on real packages,
# as a synthetic case of the same shape (no package code).


# -- TP101 under a flag that only an import of a module removed at the same release sets (torchtnt) --

_PROBE = ("import torch\n_EXPORT_UTILS_OK = True\ntry:\n    from torch.ao.quantization.pt2e.export_utils import model_is_exported\n"
          "except Exception:\n    _EXPORT_UTILS_OK = False\n")


@pytest.mark.parametrize("test", ["_EXPORT_UTILS_OK", "_EXPORT_UTILS_OK and model_is_exported(m)"])
def test_removed_api_under_the_flag_of_a_removed_probe_is_not_reported(lint, test):
    source = _PROBE + f"def switch(m):\n    if {test}:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n    return m\n"
    rows = [f.start for f in findings_of(lint, source, "TP101")]
    assert len(rows) == 1  # the probe's own import (gone in 2.11) is still reported


@pytest.mark.parametrize("source", [
    # the else branch runs exactly where the probe failed
    _PROBE + "def switch(m):\n    if _EXPORT_UTILS_OK:\n        return m\n    else:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # ``or`` does not need the flag
    _PROBE + "def switch(m, x):\n    if _EXPORT_UTILS_OK or x:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # the flag is also set elsewhere
    _PROBE + "def enable():\n    global _EXPORT_UTILS_OK\n    _EXPORT_UTILS_OK = True\n"
             "def switch(m):\n    if _EXPORT_UTILS_OK:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # the probe imports a module that stays (torch.export): it says nothing about the removed name
    "import torch\n_HAVE = True\ntry:\n    from torch.export import export\nexcept Exception:\n    _HAVE = False\n"
    "def switch(m):\n    if _HAVE:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
])
def test_removed_api_without_such_a_probe_is_still_reported(lint, source):
    messages = [f.message for f in findings_of(lint, source, "TP101")]
    assert any("move_exported_model_to_train" in m for m in messages)


# ---- round 7c -----------------------------------------------------------------------------------
# Round 7, part c of issue #8's precision sample: each false finding (or wrong message) read on real packages,
# as a synthetic case of the same shape (no package code).


def test_patching_a_removed_name_is_not_reported(lint):
    source = "import torch\nimport torch.onnx\ntorch.onnx.enable_log = lambda: None\n"
    assert findings_of(lint, source, "TP101", min_torch="2.4", target="2.15") == []
