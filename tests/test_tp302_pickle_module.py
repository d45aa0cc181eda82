"""TP302 with a custom `pickle_module=`: the finding stays, but its message must not claim that arbitrary
code is unpickled (darts 0.48.1 loads through its own restricted Unpickler, sample5a of issue #8)."""

from __future__ import annotations

import io

import pytest


def _messages(lint, source: str) -> list[str]:
    result = lint(source)
    assert result.error is None, result.error
    return [f.message for f in result.findings if f.code == "TP302"]


@pytest.mark.parametrize("value", ["_RestrictedPickleModule", "self.pickle_module", "mypkg.safe_pickle"])
def test_custom_pickle_module_gets_the_find_class_message(lint, value):
    (message,) = _messages(lint, f"import torch\nx = torch.load(p, weights_only=False, pickle_module={value})\n")
    assert "custom `pickle_module`" in message
    assert "unpickles arbitrary code" not in message


@pytest.mark.parametrize("value", ["pickle", "dill", "None", "cloudpickle"])
def test_full_unpicklers_keep_the_arbitrary_code_message(lint, value):
    (message,) = _messages(lint, f"import torch, {value if value != 'None' else 'os'}\n"
                           f"x = torch.load(p, weights_only=False, pickle_module={value})\n")
    assert "unpickles arbitrary code" in message


def test_without_pickle_module_the_message_is_unchanged(lint):
    (message,) = _messages(lint, "import torch\nx = torch.load(p, weights_only=False)\n")
    assert "unpickles arbitrary code" in message


@pytest.mark.torch
def test_torch_refuses_weights_only_true_with_a_pickle_module():
    torch = pytest.importorskip("torch")
    import pickle

    buffer = io.BytesIO()
    torch.save({"a": 1}, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        torch.load(buffer, weights_only=True, pickle_module=pickle)
