"""Dependency and environment files (issue 11 §4): each finding points at its line; pins are never rewritten."""

from __future__ import annotations

import pytest


def _found(lint, text, name, code):
    result = lint(text, name=name, select=[code])
    assert result.error is None
    return [(f.code, text[f.start:f.end], f.message) for f in result.findings]


def test_conda_channel_points_at_the_channel_line(lint):
    text = "name: x\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.6.0\n"
    [(code, span, message)] = _found(lint, text, "environment.yml", "TP305")
    assert (code, span) == ("TP305", "pytorch") and text.index("pytorch") == text.find("  - pytorch") + 4
    assert "2.5.1" in message and "`pytorch=2.6.0`" in message


def test_conda_channel_with_an_old_pin_is_not_reported(lint):
    text = "channels:\n  - pytorch\ndependencies:\n  - pytorch=2.5.1\n"
    assert _found(lint, text, "environment.yml", "TP305") == []


def test_conda_channel_prefix_is_reported(lint):
    text = "dependencies:\n  - pytorch::pytorch>=2.8\n"
    assert [span for _, span, _ in _found(lint, text, "environment.yml", "TP305")] == ["pytorch"]


@pytest.mark.parametrize("text, name, expected", [
    ('[project]\nname = "x"\nrequires-python = ">=3.13"\ndependencies = ["torch==2.4.1"]\n', "pyproject.toml",
     "torch==2.4.1"),
    ("dependencies:\n  - python=3.8\n  - pip:\n    - torch>=2.6\n", "environment.yml", "torch>=2.6"),
    ('[project]\nname = "x"\nrequires-python = "<3.11"\ndependencies = ["torch>=2.15"]\n', "pyproject.toml",
     "torch>=2.15"),
])
def test_python_without_torch_wheel(lint, text, name, expected):
    [(code, span, message)] = _found(lint, text, name, "TP306")
    assert span == expected and "has no wheel for Python" in message


def test_python_with_some_wheel_is_not_reported(lint):
    text = '[project]\nname = "x"\nrequires-python = ">=3.12"\ndependencies = ["torch>=2.4,<2.6"]\n'
    assert _found(lint, text, "pyproject.toml", "TP306") == []  # 2.4 and 2.5 have 3.12 wheels


def test_cuda_index_without_build_points_at_the_url(lint):
    text = "numpy\n--index-url https://download.pytorch.org/whl/cu118\ntorch==2.9.1\n"
    [(code, span, message)] = _found(lint, text, "requirements.txt", "TP307")
    assert span == "https://download.pytorch.org/whl/cu118"
    assert "cu126, cu128, cu130" in message


@pytest.mark.parametrize("text", [
    "--index-url https://download.pytorch.org/whl/cpu\ntorch==2.9.1\n",
    "--index-url https://download.pytorch.org/whl/cu118\ntorch>=2.4\n",  # 2.4–2.7 have cu118
    "--index-url https://example.com/whl/cu118\ntorch==2.9.1\n",
])
def test_cuda_index_with_a_build_is_not_reported(lint, text):
    assert _found(lint, text, "requirements.txt", "TP307") == []


def test_companion_mismatch_points_at_the_companion(lint):
    text = "torch==2.5.1\ntorchvision==0.19.1\ntorchaudio==2.5.1\n"
    [(code, span, message)] = _found(lint, text, "requirements.txt", "TP308")
    assert span == "torchvision==0.19.1" and "torchvision 0.20" in message


def test_pins_are_never_rewritten(lint, tmp_path):
    text = "channels:\n  - pytorch\ndependencies:\n  - python=3.8\n  - pytorch>=2.6\n"
    result = lint(text, name="environment.yml", fix=True, unsafe_fixes=True)
    assert {f.code for f in result.findings} >= {"TP305", "TP306"}
    assert (tmp_path / "environment.yml").read_text() == text
