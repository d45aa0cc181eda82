"""Issue 8, round 6, sample b (detectron2, pytorch3d, apex): mistakes found by reading real findings."""

from __future__ import annotations

import pytest


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


@pytest.mark.parametrize("code", TOLERATED.values(), ids=TOLERATED.keys())
def test_removed_name_alone_in_a_try_that_catches_its_absence_is_compatibility_code(lint, code):
    assert [f.code for f in lint(code, target="2.15", min_torch="2.4").findings] == []


UNTOLERATED = {
    # The handler does not catch what the removal raises.
    "other-exception": "import torch\ntry:\n    torch.onnx.enable_log()\nexcept RuntimeError:\n    pass\n",
    # More work in the try: on 2.6+ the statements after the removed call are silently skipped.
    "longer-body": "import torch\ntry:\n    torch.onnx.enable_log()\n    export(model)\nexcept AttributeError:\n    pass\n",
    "no-try": "import torch\ntorch.onnx.enable_log()\n",
}


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


def test_svd_message_names_the_newest_release(lint):
    """pytorch3d ops/cameras_alignment.py: `torch.svd` is documented as deprecated with no warning in any
    release torchpatch knows (the 2.15.0 libtorch has `torch.lu`'s deprecation text, none for svd); the
    message said "through 2.13"."""
    [finding] = lint("import torch\nU, S, V = torch.svd(A)\n", target="2.15", min_torch="2.4").findings
    assert finding.code == "TP251"
    assert "no runtime warning in 2.4 through 2.15" in finding.message


def test_object_collective_message_says_the_new_keyword_defaults_to_false(lint):
    """detectron2 utils/comm.py: "PyTorch 2.14 added `weights_only=True`" read like torch.load's 2.6 default
    change; the 2.14.1 and 2.15.0 signatures have ``weights_only: bool = False``."""
    code = "import torch.distributed as dist\ndist.all_gather_object(out, obj)\n"
    [finding] = lint(code, target="2.15", min_torch="2.4").findings
    assert finding.code == "TP310"
    assert "added `weights_only=` (default `False`" in finding.message
