"""Dependency files: requirements are found where they are written, pins feed min-torch and TP304."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main
from torchpatch.engine.config import min_torch_from_pins
from torchpatch.engine.dependencies import is_dependency_file, requirements_in


@pytest.mark.parametrize("name, text, expected", [
    ("requirements.txt", "# comment\n-r base.txt\nnumpy>=1.26\ntorch==2.5.1 --hash=sha256:ab  # pinned\n\n",
     [("numpy", "numpy>=1.26"), ("torch", "torch==2.5.1")]),
    ("constraints-gpu.txt", "torch>=2.6 ; sys_platform == 'linux'\n", [("torch", "torch>=2.6 ; sys_platform == 'linux'")]),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = [\n  "numpy",\n  \'torch>=2.6\',\n]\n'
                       '[project.optional-dependencies]\ngpu = ["torch[cuda]==2.8.0"]\n',
     [("numpy", "numpy"), ("torch", "torch>=2.6"), ("torch", "torch[cuda]==2.8.0")]),
    ("setup.cfg", "[metadata]\nname = x\n[options]\ninstall_requires =\n    numpy\n    torch>=2.7  # min\n"
                  "[options.extras_require]\ndev =\n    torch==2.9.1\n",
     [("numpy", "numpy"), ("torch", "torch>=2.7"), ("torch", "torch==2.9.1")]),
    ("pyproject.toml", "not toml [", []),
])
def test_requirements_are_located(name, text, expected):
    spans = requirements_in(Path(name), text)
    assert [(span.name, text[span.start:span.end]) for span in spans] == expected


def test_dependency_file_names():
    assert all(is_dependency_file(Path(n)) for n in ("requirements.txt", "requirements-dev.txt", "constraints.txt",
                                                     "pyproject.toml", "setup.cfg"))
    assert not any(is_dependency_file(Path(n)) for n in ("setup.py", "req.txt", "README.md"))


def test_min_torch_combines_every_pin(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.5\n")
    (tmp_path / "constraints.txt").write_text("torch>=2.7,<3\n")
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == ("2.7", "constraints.txt, requirements.txt")


def test_pins_are_reported_with_noqa_and_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.5.1\n")
    (tmp_path / "requirements-old.txt").write_text("torch==2.5.1  # noqa: TP304 (reproducing a paper)\n")
    assert main(["check", "--output-format", "json", "."]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(Path(f["filename"]).name, f["code"], f["location"], f["fix"]) for f in findings] == [
        ("requirements.txt", "TP304", {"row": 2, "column": 1}, None)]
    assert "CVE-2025-32434" in findings[0]["message"] and "CVE-2026-24747" in findings[0]["message"]


def test_fix_never_touches_dependency_files(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("torch==2.5.1\n")
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", str(tmp_path)]) == 1
    assert path.read_text() == "torch==2.5.1\n"
