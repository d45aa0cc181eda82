"""Hand-read precision cases for TP301 torch-load-without-weights-only: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import argparse
import io
import os

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


_SETS_IT = 'import os\nos.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"\nimport torch\n\n'


def _tp301(lint, source: str, **options):
    result = lint(source, **options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.code == "TP301"]


@pytest.mark.parametrize("setting", [
    'os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"\n',
    'os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")\n',
    'os.environ.update(TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")\n',
])
def test_a_file_that_sets_the_escape_hatch_gets_a_message_that_says_so(lint, setting):
    source = f"import os\n{setting}import torch\n\ndef restore(path):\n    return torch.load(path, map_location='cpu')\n"
    (finding,) = _tp301(lint, source)
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" in finding.message
    assert "the default became `weights_only=True`" not in finding.message
    assert "every release" in finding.message
    # The unsafe fix still writes weights_only=True, and says that the variable no longer applies there.
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" in finding.fix.message


@pytest.mark.parametrize("value", ['"0"', '""', '"false"'])
def test_a_value_torch_reads_as_unset_keeps_the_default_message(lint, value):
    source = f"import os\nimport torch\nos.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = {value}\nx = torch.load(p)\n"
    (finding,) = _tp301(lint, source)
    assert "the default became `weights_only=True` in PyTorch 2.6" in finding.message


def test_without_the_variable_the_message_is_unchanged(lint):
    (finding,) = _tp301(lint, "import torch\nx = torch.load(p)\n")
    assert "the default became `weights_only=True` in PyTorch 2.6" in finding.message
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in finding.message


def test_another_mapping_named_environ_is_not_the_variable(lint):
    source = "import torch\nenviron = {}\nenviron['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'\nx = torch.load(p)\n"
    (finding,) = _tp301(lint, source)
    assert "the default became `weights_only=True`" in finding.message


def test_a_target_before_2_6_keeps_the_default_message(lint):
    # The variable does nothing before 2.6 (2.4.1 and 2.5.1 do not read it).
    (finding,) = _tp301(lint, _SETS_IT + "x = torch.load(p)\n", target="2.5")
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in finding.message


def test_the_rest_of_tp301_is_unchanged_in_such_a_file(lint):
    # A pickle_module call keeps its own message; a 2.6 minimum still reports nothing for a plain call.
    (finding,) = _tp301(lint, _SETS_IT + "import pickle\nx = torch.load(p, pickle_module=pickle)\n")
    assert "with `pickle_module`" in finding.message
    assert _tp301(lint, _SETS_IT + "x = torch.load(p)\n", min_torch="2.6") == []
    assert _tp301(lint, _SETS_IT + "x = torch.load(p, weights_only=False)\n") == []


@pytest.mark.torch
def test_torch_honours_the_variable_for_a_call_without_weights_only(monkeypatch):
    torch = pytest.importorskip("torch")
    from torch.torch_version import TorchVersion

    if TorchVersion(torch.__version__) < (2, 6):
        pytest.skip("the variable is read from 2.6")

    buffer = io.BytesIO()
    torch.save({"obj": argparse.Namespace(lr=0.1)}, buffer)  # not allowlisted: weights_only=True refuses it
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"
    buffer.seek(0)
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        loaded = torch.load(buffer)
    assert loaded["obj"].lr == 0.1
    buffer.seek(0)
    with pytest.raises(Exception):
        torch.load(buffer, weights_only=True)  # an explicit argument is not overridden


# TP301 with a `pickle_module` and no `weights_only=`: torch keeps weights_only=False with any pickle module
# (2.4-2.15), and the message said "unpickles with the full pickle module". That is right for `pickle`, `dill`
# and for parlai 1.7.2's permissive Unpickler, but not for a restricted one (darts' shape, sample5a): there
# only the module's `find_class` decides. The message now names the custom module's find_class, as TP302's does.

@pytest.mark.parametrize("value", ["_RestrictedPickle", "self.pickle_module", "mypkg.safe_pickle"])
@pytest.mark.parametrize("form", ["keyword", "positional"])
def test_tp301_with_a_custom_pickle_module_names_its_find_class(lint, value, form):
    call = f"torch.load(p, pickle_module={value})" if form == "keyword" else f"torch.load(p, 'cpu', {value})"
    (finding,) = _tp301(lint, f"import torch\nx = {call}\n")
    assert "find_class" in finding.message
    assert "full pickle module" not in finding.message
    assert finding.fix is None


@pytest.mark.parametrize("value", ["pickle", "dill", "pickle.Unpickler"])
def test_tp301_with_a_full_unpickler_keeps_the_full_pickle_message(lint, value):
    (finding,) = _tp301(lint, f"import torch, pickle, dill\nx = torch.load(p, pickle_module={value})\n")
    assert "full pickle module" in finding.message


def test_the_standard_pickle_under_another_name_is_full(lint):
    (finding,) = _tp301(lint, "import torch\nimport pickle as pkl\nx = torch.load(p, pickle_module=pkl)\n")
    assert "full pickle module" in finding.message


# ---- round 6d -----------------------------------------------------------------------------------
# Round 6, part d of issue #8's precision sample: each false finding (or wrong message) read on real packages,
# as a synthetic case of the same shape (no package code).


# -- TP301 with a restricted pickle module of the project's own (spandrel 0.4.2 loader) --------------

@pytest.mark.parametrize("value", ["RestrictedUnpickle", "self.safe_pickle", "mypkg.unpickler.Restricted"])
def test_tp301_custom_pickle_module_does_not_claim_full_pickle(lint, value):
    (finding,) = findings_of(lint, f"import torch\nx = torch.load(p, map_location='cpu', pickle_module={value})\n",
                           "TP301")
    assert "custom `pickle_module`" in finding.message and "find_class" in finding.message
    assert "full pickle module" not in finding.message and finding.fix is None


@pytest.mark.parametrize("source", [
    "import torch, pickle\nx = torch.load(p, pickle_module=pickle)\n",
    "import torch, dill\nx = torch.load(p, 'cpu', dill)\n",
])
def test_tp301_full_unpicklers_keep_the_full_pickle_message(lint, source):
    (finding,) = findings_of(lint, source, "TP301")
    assert "full pickle module" in finding.message


def test_tp301_pickle_module_none_is_torchs_default(lint):
    # pickle_module=None is what torch.load defaults to: the weights_only default changes at 2.6 as usual.
    (finding,) = findings_of(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301")
    assert "default became `weights_only=True` in PyTorch 2.6" in finding.message and finding.fix is not None
    assert findings_of(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301", min_torch="2.6") == []


# ---- round 10c ----------------------------------------------------------------------------------
# Round 10, part c of issue #8's precision sample: all 114 findings read were true, so these are the shapes that
# needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix read
# must keep its exact text. They guard the guard classifier against learning to skip them.


# -- a file-extension or exists() test around torch.load is no guard ---------------------------------------

@pytest.mark.parametrize("test", ["os.path.exists(path)", "path.endswith('ckpt')"])
def test_torch_load_under_a_file_test_is_still_reported(lint, test):
    source = (f"import os\nimport torch\n\ndef load(path):\n    if {test}:\n"
              "        return torch.load(path, map_location='cpu')\n    return None\n")
    assert len(findings_of(lint, source, "TP301", min_torch="2.4")) == 1


# ---- round 13b ----------------------------------------------------------------------------------
# Round 13, part b of issue #8's precision sample (TransformerEngine, tensordict and torchchat snapshots): each
# finding whose message was wrong for its call, read on real code, as a synthetic case of the same shape (no
# package code).


def test_an_unused_torchpatch_code_keeps_its_safe_fix(lint):
    found = findings_of(lint, "import torch\nx = torch.zeros(1)  # noqa: TP301\n", "TP100",
                        target="2.15", min_torch="2.4", select=["ALL"])
    assert len(found) == 1 and found[0].fix.applicability == "safe" and "TorchFix" not in found[0].message


# ---- round 13c ----------------------------------------------------------------------------------
# Round 13, part c of issue #8's precision sample (ogb, openai jukebox with its vendored apex and tensorboardX,
# and co-tracker snapshots): 119 findings read, none false, no wrong safe fix. These tests keep shapes read
# there that sit next to compatibility-code detection or an unusual argument layout: each is a true finding (or
# a fix) whose surroundings are *not* a torch version check, so a guard that hid it, or a fix that moved an
# argument, would be a regression. Synthetic code of the same shape (no package code).


# -- torch.load under a literal-False toggle the user flips ---------------------------------------------
# (jukebox notebook: "set to True to load the previous checkpoint" above an ``if False:`` block; a user
# switch, not a version check: when switched on, the load is a full pickle at the 2.4 minimum.)

def test_load_under_a_literal_false_user_toggle_is_reported(lint):
    source = (
        "import torch as t\n"
        "# Set to True to reload the saved codes:\n"
        "if False:\n"
        "    zs = t.load('codes.t')\n"
    )
    found = findings_of(lint, source, "TP301", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [4] and "2.6" in found[0].message


# -- torch.load with a positional second argument -----------------------------------------------------
# (ogb datasets pass a mode string in torch.load's second slot, which is map_location; the fix must add the
# keyword after it, not put anything in that slot.)

def test_load_with_a_positional_map_location_gets_the_keyword_after_it(lint):
    source = (
        "import torch\n"
        "def read(path):\n"
        "    return torch.load(path, 'rb')\n"
    )
    found = findings_of(lint, source, "TP301", target="2.15", min_torch="2.4")
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "unsafe"
    fixed = lint(source, fix=True, unsafe_fixes=True, target="2.15", min_torch="2.4", select=["TP301"]).fixed_text
    assert "torch.load(path, 'rb', weights_only=True)" in fixed
