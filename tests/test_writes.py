"""Writes that never surprise (issue: trust, §4): links, read-only files, notebooks."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
