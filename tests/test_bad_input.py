"""Unreadable files are reported (path and reason) and skipped; the run goes on, never a traceback."""

from __future__ import annotations

import json
import sys

import pytest

from torchpatch.frontends.cli import main

GOOD = 'import torch\nstate = torch.load("m.pt")\n'


def run_json(capsys, *paths) -> tuple[int, list[dict], str]:
    code = main(["check", "--isolated", "--output-format", "json", *map(str, paths)])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


BAD_FILES = {
    "syntax.py": b"import torch\ndef broken(:\n",
    "latin1_without_cookie.py": "x = 'caf\u00e9'\n".encode("latin-1"),
    "binary.py": bytes(range(256)) * 4,
    "bad_cookie.py": b"# -*- coding: no-such-codec -*-\nimport torch\n",
    "nested.py": b"import torch\nx = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n",
    "notebook.ipynb": b"{ this is not json",
    "not_a_notebook.ipynb": b'{"cells": 3}',
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_is_reported_and_the_run_goes_on(tmp_path, capsys, name):
    bad = tmp_path / name
    bad.write_bytes(BAD_FILES[name])
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    code, findings, err = run_json(capsys, tmp_path)
    assert code == 1
    by_file = {(f["filename"].rsplit("/", 1)[-1], f["code"]) for f in findings}
    assert (name, "TP001") in by_file
    assert ("good.py", "TP301") in by_file
    lines = [line for line in err.splitlines() if name in line]
    assert len(lines) == 1 and "Traceback" not in err


def test_empty_file_is_clean(tmp_path, capsys):
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "empty.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    code, findings, err = run_json(capsys, tmp_path)
    assert (code, findings, err) == (0, [], "")


def test_very_large_file(tmp_path, capsys):
    body = "import torch\n" + "x = torch.zeros(3) + 1\n" * 50_000 + 'torch.load("m.pt")\n'
    (tmp_path / "large.py").write_text(body)
    code, findings, _ = run_json(capsys, tmp_path)
    assert code == 1
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("TP301", 50_002)]


def test_newer_syntax_is_reported_with_the_python_version(tmp_path, capsys):
    # PEP 695 generics (3.12) or PEP 758 except without parentheses (3.14), whichever this Python lacks.
    source = "type Alias[T] = list[T]\n" if sys.version_info < (3, 12) else "try:\n    pass\nexcept A, B:\n    pass\n"
    if sys.version_info >= (3, 14):
        pytest.skip("no newer syntax known to test against")
    (tmp_path / "new.py").write_text("import torch\n" + source)
    code, findings, err = run_json(capsys, tmp_path)
    assert code == 1
    assert findings[0]["code"] == "TP001"
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in findings[0]["message"]


def test_unreadable_file_is_never_written_by_fix(tmp_path):
    path = tmp_path / "syntax.py"
    data = b"import torch\nep = torch.export.export_for_training(m, a)\ndef broken(:\n"
    path.write_bytes(data)
    assert main(["check", "--isolated", "--fix", str(path)]) == 1
    assert path.read_bytes() == data


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err


def test_a_crashing_rule_is_reported_per_file_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    from torchpatch.rules.torch_load_weights_only_false import TorchLoadWeightsOnlyFalse

    def explode(self, ctx, call, qualname):
        if "boom" in ctx.text:
            raise ValueError("rule bug")
        return iter(())

    monkeypatch.setattr(TorchLoadWeightsOnlyFalse, "check_call", explode)
    crash = tmp_path / "crash.py"
    crash.write_text('import torch\nboom = torch.load("m.pt")\n')
    (tmp_path / "good.py").write_text(GOOD)
    original = crash.read_bytes()
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "crash.py: internal error (ValueError: rule bug); the file was left unchanged" in err
    assert "Traceback" not in err
    assert crash.read_bytes() == original
    assert "weights_only=True" in (tmp_path / "good.py").read_text()
