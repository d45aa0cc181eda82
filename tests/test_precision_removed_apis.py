"""Hand-read precision cases for the other removed-API rules (TP1xx) and TP100: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 9a -----------------------------------------------------------------------------------
# Round 9, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


def test_a_known_version_test_beside_a_local_minimum_keeps_the_fallback_unreported(lint):
    # piq 0.8 iw_ssim.py: ``minimum = _parse_version("1.10.0")``, ``torch_version = _parse_version(torch.__version__)``,
    # ``if len(torch_version) != 0 and torch_version >= minimum: linalg.eigh else: torch.symeig`` — the
    # else is the old-release fallback (or an unreadable version); following the locals must not expose it.
    source = ("import torch\nfrom mylib.utils import _parse_version\n\ndef eig(c):\n"
              "    recommended_torch_version = _parse_version('1.10.0')\n"
              "    torch_version = _parse_version(torch.__version__)\n"
              "    if len(torch_version) != 0 and torch_version >= recommended_torch_version:\n"
              "        return torch.linalg.eigh(c)\n"
              "    else:\n        return torch.symeig(c, eigenvectors=True)\n")
    assert findings_of(lint, source, "TP130") == []


# ---- round 11c ----------------------------------------------------------------------------------
# Round 11, part c of issue #8's precision sample (OpenPCDet, ChatTTS, vits, Wav2Lip, SlowFast, maskrcnn-
# benchmark, shap-e, consistency_models, nerf-pytorch snapshots): each false finding read on real code, as a
# synthetic case of the same shape (no package code).


# -- a removed name read only behind a feature probe of that very name --------------------------------
# (ChatTTS utils/io.py: ``if hasattr(torch.serialization, "FILE_LIKE"):`` then reads that alias, with
# fallbacks in elif/else. ``FILE_LIKE`` is in torch/serialization.py of the 2.4.1, 2.5.1 and 2.6.0 wheels
# and gone from 2.7.1 … 2.15.0, so the read runs only where the name exists.)

@pytest.mark.parametrize("source", [
    "import torch\nif hasattr(torch.serialization, 'FILE_LIKE'):\n    F = torch.serialization.FILE_LIKE\n"
    "else:\n    F = str\n",
    "import torch\nfrom torch import serialization\n"
    "if hasattr(serialization, 'FILE_LIKE') and x:\n    F = serialization.FILE_LIKE\n",
    "import torch\nF = torch.serialization.FILE_LIKE if hasattr(torch.serialization, 'FILE_LIKE') else str\n",
    "import torch\ndef f():\n    if hasattr(torch.serialization, 'FILE_LIKE'):\n"
    "        for _ in range(2):\n            return torch.serialization.FILE_LIKE\n",
])
def test_a_removed_name_inside_a_probe_of_itself_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP104", target="2.15", min_torch="2.4") == []


@pytest.mark.parametrize("source", [
    # no probe at all
    "import torch\nF = torch.serialization.FILE_LIKE\n",
    # a probe of another name
    "import torch\nif hasattr(torch, 'compile'):\n    F = torch.serialization.FILE_LIKE\n",
    # an ``or`` does not make sure the name exists
    "import torch\nif hasattr(torch.serialization, 'FILE_LIKE') or x:\n    F = torch.serialization.FILE_LIKE\n",
    # the probe's own test is not inside its body
    "import torch\nif torch.serialization.FILE_LIKE and hasattr(torch.serialization, 'FILE_LIKE'):\n    pass\n",
])
def test_a_removed_name_outside_its_own_probe_stays_reported(lint, source):
    assert len(findings_of(lint, source, "TP104", target="2.15", min_torch="2.4")) == 1


# ---- round 12c ----------------------------------------------------------------------------------
# Round 12, part c of issue #8's precision sample (executorch, botorch, GroundingDINO,
# segmentation_models.pytorch and gpytorch snapshots): 128 findings read, none false. These tests keep the
# shapes read there that sit next to compatibility-code detection reported: each is a true finding whose
# surrounding ``try``/``if``/``with`` is *not* a torch version check or feature probe, so a guard that hid it
# would hide a real problem. Synthetic code of the same shape (no package code).


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


# ---- round 13b ----------------------------------------------------------------------------------
# Round 13, part b of issue #8's precision sample (TransformerEngine, tensordict and torchchat snapshots): each
# finding whose message was wrong for its call, read on real code, as a synthetic case of the same shape (no
# package code).


# -- TP100: a TorchFix code that torchpatch does not need may still be TorchFix's ----------------------
# (tensordict's tests: ``try: from torch import vmap`` / ``except ImportError: from functorch import vmap
# # noqa: TOR103``, and setup.cfg configures TorchFix codes for flake8. torchpatch's guards accept the
# fallback, so TP100 called the code unused and its *safe* fix removed it; flake8 with TorchFix 0.7.0 then
# reports TOR103 on that line.)

_TORCHFIX_FALLBACK = ("try:\n    from torch import vmap\nexcept ImportError:\n"
                      "    from functorch import vmap  # noqa: TOR103\n")


def test_an_unused_torchfix_code_is_reported_with_an_unsafe_fix_only(lint):
    found = findings_of(lint, _TORCHFIX_FALLBACK, "TP100", target="2.15", min_torch="2.4", select=["ALL"])
    assert len(found) == 1
    assert "TorchFix" in found[0].message
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"
    assert lint(_TORCHFIX_FALLBACK, fix=True, target="2.15", min_torch="2.4", select=["ALL"]).fixed_text in (
        None, _TORCHFIX_FALLBACK)


# ---- round 14c ----------------------------------------------------------------------------------
# Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code). All 81 findings of the round were true, so nothing here pins a fix: these cases
# keep the shapes read in text-generation-inference, torcheval, higher and Pearl reported (and their fixes as
# read), so that a later precision fix elsewhere that grows too wide shows up here. Each claim was checked
# against the real wheels (see bench/trust_samples/README.md, sample14c).


def _rows(findings):
    return [f.row for f in findings]


# -- a removed name inside a backend branch -------------------------------------------------------------------
# `torch.cuda.tunable.write_file` is in 2.9.1's torch/cuda/tunable.py and in neither 2.10.0's nor 2.15.0's (the
# module has no `__getattr__`). A branch chosen by the platform (`SYSTEM == "rocm"`) or an environment variable
# is not a torch version check: the call still fails on 2.15.

def test_tunable_write_file_in_a_platform_branch_is_reported(lint):
    code = (
        "import os\nimport torch\n\n"
        "def warmup(system, path, lengths):\n"
        "    if system == \"rocm\":\n"
        "        if os.environ.get(\"TUNABLE\", \"1\") == \"1\":\n"
        "            torch.cuda.tunable.enable()\n"
        "            for n in lengths:\n"
        "                torch.cuda.tunable.write_file(path)\n"
    )
    findings = findings_of(lint, code, "TP104", target="2.15", min_torch="2.4")
    assert _rows(findings) == [9]
    assert "2.10" in findings[0].message
    # The names the 2.15 module still has are not reported.
    assert findings_of(lint, code.replace("write_file", "read_file"), "TP104", target="2.15", min_torch="2.4") == []
