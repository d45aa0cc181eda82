"""Writes that never surprise (issue: trust, §4): links, read-only files, notebooks."""

from __future__ import annotations

import json
import os

from torchpatch.frontends.cli import main

OLD = "import torch\nep = torch.export.export_for_training(m, (x,))\n"
NEW = "import torch\nep = torch.export.export(m, (x,))\n"
FIX = ["check", "--isolated", "--fix", "--min-torch", "2.6", "--ignore", "TP430"]


def test_a_symlink_is_written_through_once_and_stays_a_link(tmp_path, capsys):
    (tmp_path / "real.py").write_text(OLD)
    (tmp_path / "link.py").symlink_to("real.py")
    assert main([*FIX, "--show-fixes", str(tmp_path)]) == 0
    assert (tmp_path / "link.py").is_symlink() and os.readlink(tmp_path / "link.py") == "real.py"
    assert (tmp_path / "real.py").read_text() == NEW
    assert capsys.readouterr().out.count("Fixed 1") == 1  # once, though both paths were checked


def test_a_read_only_file_is_reported_left_alone_and_fails_the_run(tmp_path, capsys):
    path = tmp_path / "ro.py"
    path.write_text(OLD)
    path.chmod(0o444)
    try:
        assert main([*FIX, "--show-fixes", str(path)]) == 1
        assert path.read_text() == OLD and (path.stat().st_mode & 0o777) == 0o444
        captured = capsys.readouterr()
        assert "read-only" in captured.err and "Fixed" not in captured.out
        assert "All checks passed" not in captured.out + captured.err
    finally:
        path.chmod(0o644)


def test_a_failed_write_is_an_error(tmp_path, capsys, monkeypatch):
    import torchpatch.engine.writer as writer

    def refuse(path, data):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writer, "atomic_write", refuse)
    path = tmp_path / "m.py"
    path.write_text(OLD)
    assert main([*FIX, str(path)]) == 1
    assert path.read_text() == OLD
    assert "Permission denied" in capsys.readouterr().err


def _notebook(cells, *, crlf=False, indent=1) -> str:
    notebook = {"metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "code", "execution_count": None, "id": str(i), "metadata": {},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["\u001b[31mred\u001b[0m\n"]}], "source": source}
        for i, source in enumerate(cells)]}
    text = json.dumps(notebook, indent=indent, ensure_ascii=True) + "\n"
    return text.replace("\n", "\r\n") if crlf else text


def test_notebook_keeps_every_byte_outside_the_edited_cell(tmp_path):
    path = tmp_path / "n.ipynb"
    original = _notebook([["import torch\n", "x = 'é'\n", "y = 1"],
                          ["import torch\n", "state = torch.load(p)\n", "z = 2"]], crlf=True)
    path.write_bytes(original.encode())
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", "--select", "TP301", str(path)]) == 0
    new = path.read_bytes().decode()
    changed = [(a, b) for a, b in zip(original.split("\r\n"), new.split("\r\n")) if a != b]
    assert changed == [('    "state = torch.load(p)\\n",', '    "state = torch.load(p, weights_only=True)\\n",')]
    assert "\\u001b[31m" in new and "\\u00e9" in new and new.count("\r\n") == original.count("\r\n")


def test_notebook_magics_inside_blocks_and_continued_lines_are_checked(tmp_path, capsys):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook([["import torch\n", "if missing:\n", "    !pip install thing\n",
                                "!pip install a \\\n", "    b\n", "state = torch.load(p)"]]))
    assert main(["check", "--isolated", "--select", "TP301", "--output-format", "json", str(path)]) == 1
    captured = capsys.readouterr()
    (finding,) = json.loads(captured.out)
    assert finding["code"] == "TP301" and "unreadable" not in captured.err and "syntax error" not in captured.err
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", "--select", "TP301", str(path)]) == 0
    source = json.loads(path.read_text())["cells"][0]["source"]
    assert source[2] == "    !pip install thing\n" and source[3:5] == ["!pip install a \\\n", "    b\n"]


def test_an_unreadable_cell_is_reported_with_its_number_and_reason(tmp_path, capsys):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook([["import torch\n"], ["import torch\n", "def f(:\n", "    pass"]]))
    assert main(["check", "--isolated", str(path)]) == 1
    err = capsys.readouterr().err
    assert "cell 2, line 2: syntax error" in err and "def f(:" in err
