"""Hand-read precision cases for the other security rules (TP3xx): each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 6c -----------------------------------------------------------------------------------
# Round 6, sample c of issue #8: what reading real findings in context turned up. TP301 in a file that sets
# ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (mace-torch 0.3.16 does so at module level, before importing torch, in
# the same files that load whole pickled models): on 2.6+ torch reads the variable at each load and forces
# ``weights_only=False`` when the call leaves it unset (2.6.0 ... 2.15.0 ``torch/serialization.py``), so such a
# call does not start loading weights-only in 2.6. It unpickles fully on every release. The finding stays (the
# call does not say what it means, and the variable is TP447's concern), but its message must not claim that the
# default became ``weights_only=True`` for this call.


def _tp301(lint, source: str, **options):
    result = lint(source, **options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.code == "TP301"]


def test_a_project_module_imported_under_the_name_pickle_is_custom(lint):
    # parlai 1.7.2: `from parlai.utils import pickle` then `torch.load(f, pickle_module=pickle)`.
    source = "import torch\nfrom mypkg.utils import pickle\nx = torch.load(p, pickle_module=pickle)\n"
    (finding,) = _tp301(lint, source)
    assert "custom `pickle_module`" in finding.message
    result = lint("import torch\nfrom mypkg.utils import pickle\nx = torch.load(p, weights_only=False, pickle_module=pickle)\n")
    (tp302,) = [f for f in result.findings if f.code == "TP302"]
    assert "custom `pickle_module`" in tp302.message


# ---- round 7a -----------------------------------------------------------------------------------
# Round 7, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


# -- a pin with a local version label (cleanrl requirements-memory_gym.txt) ---------------------------

@pytest.mark.parametrize("text", ["torch==2.7.1+cu118\n", "numpy\ntorch==2.5.1+cpu  # via uv\n"])
def test_vulnerable_pin_with_a_local_label_is_reported(lint, text):
    assert len(findings_of(lint, text, "TP304", name="requirements.txt")) == 1


def test_fixed_pin_with_a_local_label_is_not_reported(lint):
    assert findings_of(lint, "torch==2.10.0+cu126\n", "TP304", name="requirements.txt") == []


# ---- round 11b ----------------------------------------------------------------------------------
# Round 11, part b of issue #8's precision sample: 111 findings read, all true; eight had a message that named
# the gcc/nvcc spelling `-std=c++20` for an MSVC flag `/std:c++17` (fixed in TP435). These are that fix and the
# shapes that needed the most care, as synthetic code (no package code): each must stay reported, and each safe
# fix read must keep its exact text.


# -- TP303: the github fallback in an except branch is reported, the local load is not --------------

def test_a_local_hub_load_is_quiet_and_its_github_fallback_is_reported(lint):
    source = (
        "import os\n"
        "import torch\n"
        "def extractor(name):\n"
        "    try:\n"
        "        local = os.path.expanduser('~/.cache/torch/hub/someone_repo_main')\n"
        "        return torch.hub.load(local, name, source='local')\n"
        "    except Exception:\n"
        "        return torch.hub.load('someone/repo', name)\n"
    )
    findings = findings_of(lint, source, "TP303", min_torch="2.4", target="2.15")
    assert [f.row for f in findings] == [8]


# ---- round 14c ----------------------------------------------------------------------------------
# Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code). All 81 findings of the round were true, so nothing here pins a fix: these cases
# keep the shapes read in text-generation-inference, torcheval, higher and Pearl reported (and their fixes as
# read), so that a later precision fix elsewhere that grows too wide shows up here. Each claim was checked
# against the real wheels (see bench/trust_samples/README.md, sample14c).


def _rows(findings):
    return [f.row for f in findings]


# -- explicit `weights_only=False` of an in-memory round trip -------------------------------------------------
# A state dict saved into a BytesIO and loaded back with `weights_only=False` is still full pickle; the rule's
# doc asks for `# noqa: TP302` on loads of files one wrote oneself (the same verdict as samples 12 and 13).

@pytest.mark.parametrize("suffix, expected", [("", [8]), ("  # noqa: TP302", [])])
def test_in_memory_round_trip_with_weights_only_false(lint, suffix, expected):
    code = (
        "import io\nimport torch\n\n"
        "def copy_state(src, dst):\n"
        "    buf = io.BytesIO()\n"
        "    torch.save(src.state_dict(), buf)\n"
        "    buf.seek(0)\n"
        f"    dst.load_state_dict(torch.load(buf, weights_only=False)){suffix}\n"
    )
    assert _rows(findings_of(lint, code, "TP302", target="2.15", min_torch="2.4")) == expected
