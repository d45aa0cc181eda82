"""The reason a file was not checked (TP001) says what kind of code it is: Python 2 code is old, not too new, and
broken indentation is broken on every Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchpatch.engine.linter import ParseFailure, parse_text


def _reason(source: str) -> str:
    with pytest.raises(ParseFailure) as failure:
        parse_text(source, Path("m.py"))
    return str(failure.value)


@pytest.mark.parametrize("source", [
    'print "epoch", epoch\n',
    'exec "x = 1"\n',
    "try:\n    pass\nexcept ValueError, error:\n    pass\n",
    "os.chmod(path, 0755)\n",
])
def test_python_2_code_is_named_so(source: str) -> None:
    reason = _reason(source)
    assert reason.endswith("(Python 2 code: torchpatch checks Python 3 files)")
    assert "newer" not in reason


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "x = (1,\n"])
def test_other_syntax_errors_name_the_python_that_parsed(source: str) -> None:
    assert "syntax newer than this Python cannot be checked" in _reason(source)


@pytest.mark.parametrize("source, reason", [
    ("x = {\n    1: 2\n    }\n\n    for k in x:\n        pass\n", "(broken indentation: no Python version parses it)"),
    ("if x:\n        a = 1\n\tb = 2\n", "(tabs and spaces mixed in the indentation, which Python 3 rejects)"),
])
def test_indentation_errors_are_not_called_newer_syntax(source: str, reason: str) -> None:
    assert _reason(source).endswith(reason)
