"""Round 6, sample c of issue #8: what reading real findings in context turned up.

TP301 in a file that sets ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (mace-torch 0.3.16 does so at module level,
before importing torch, in the same files that load whole pickled models): on 2.6+ torch reads the variable
at each load and forces ``weights_only=False`` when the call leaves it unset (2.6.0 ... 2.15.0
``torch/serialization.py``), so such a call does not start loading weights-only in 2.6. It unpickles fully on
every release. The finding stays (the call does not say what it means, and the variable is TP447's
concern), but its message must not claim that the default became ``weights_only=True`` for this call.
"""

from __future__ import annotations

import argparse
import io
import os

import pytest

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


def test_a_project_module_imported_under_the_name_pickle_is_custom(lint):
    # parlai 1.7.2: `from parlai.utils import pickle` then `torch.load(f, pickle_module=pickle)`.
    source = "import torch\nfrom mypkg.utils import pickle\nx = torch.load(p, pickle_module=pickle)\n"
    (finding,) = _tp301(lint, source)
    assert "custom `pickle_module`" in finding.message
    result = lint("import torch\nfrom mypkg.utils import pickle\nx = torch.load(p, weights_only=False, pickle_module=pickle)\n")
    (tp302,) = [f for f in result.findings if f.code == "TP302"]
    assert "custom `pickle_module`" in tp302.message


def test_the_standard_pickle_under_another_name_is_full(lint):
    (finding,) = _tp301(lint, "import torch\nimport pickle as pkl\nx = torch.load(p, pickle_module=pkl)\n")
    assert "full pickle module" in finding.message
