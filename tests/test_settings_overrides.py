"""Settings a user can see and override (issue #25 §2): --show-settings/--show-files, the nested configuration's
torch pin, ruff's precedence of the command line, extend, .torchpatch.toml, an unwritable cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main

LOAD = 'import torch\nstate = torch.load("m.pt")\n'  # TP301
# TP202 on every release; its safe fix needs torch.amp.GradScaler (2.3+)
SCALER = "import torch\ns = torch.cuda.amp.GradScaler()\n"
# TP101: a fix that is safe only where min-torch is at least 2.6
EXPORT = "import torch\nep = torch.export.export_for_training(m, a, strict=False)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def codes(capsys, *args: str) -> list[str]:
    main(["check", "--output-format", "json", "--no-cache", *args])
    return sorted(f["code"] for f in json.loads(capsys.readouterr().out))


def show_settings(capsys, *args: str) -> dict[str, str]:
    assert main(["check", "--show-settings", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {line.split(" = ", 1)[0]: line.split(" = ", 1)[1] for line in lines if " = " in line}


def test_a_nested_config_that_sets_only_select_keeps_the_projects_torch_pin(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n')
    write(project / "pkg" / "sub" / "torchpatch.toml", 'select = ["TP1"]\n')
    write(project / "pkg" / "sub" / "m.py", EXPORT)
    settings = show_settings(capsys, "pkg/sub/m.py")
    assert settings["min-torch"] == f'"2.6"  # torch pins in {project / "pyproject.toml"}'
    assert settings["configuration file"] == json.dumps(str(project / "pkg" / "sub" / "torchpatch.toml"))
    assert settings["select"].startswith('["TP1"]  # ') and settings["select"].endswith("torchpatch.toml")
    main(["check", "--output-format", "json", "--no-cache", "pkg/sub/m.py"])
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["fix"]["applicability"] == "safe"  # the 2.6 floor makes export() a safe replacement


def test_pins_are_not_taken_from_another_project_above(project, capsys):
    write(project / "requirements.txt", "torch>=2.8\n")
    write(project / "inner" / "setup.cfg", "[metadata]\nname = inner\n")  # a project of its own, no pin
    write(project / "inner" / "m.py", LOAD)
    assert show_settings(capsys, "inner/m.py")["min-torch"].startswith('"2.4"  # default')
    assert show_settings(capsys, "requirements.txt")["min-torch"].startswith('"2.8"  # torch pins in ')


def test_show_settings_names_the_source_of_each_value(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nmin-torch = "2.7"\nignore = ["TP301"]\n')
    write(project / "src" / "m.py", LOAD)
    settings = show_settings(capsys, "src")  # a folder: its first file, as ruff does
    assert settings["min-torch"] == f'"2.7"  # {project / "pyproject.toml"}'
    assert settings["ignore"] == f'["TP301"]  # {project / "pyproject.toml"}'
    assert settings["target-torch"].endswith("# default")
    settings = show_settings(capsys, "--min-torch", "2.9", "--target-torch", "2.12", "src/m.py")
    assert settings["min-torch"] == '"2.9"  # --min-torch' and settings["target-torch"] == '"2.12"  # --target-torch'
    assert "TP301" not in settings["enabled rules for this file"]


def test_show_files_lists_what_would_be_checked(project, capsys):
    write(project / ".gitignore", "gen/\n")
    write(project / "a.py", LOAD)
    write(project / "gen" / "b.py", LOAD)
    write(project / "requirements.txt", "torch==2.6.0\n")
    assert main(["check", "--show-files", "."]) == 0
    assert capsys.readouterr().out.splitlines() == [str(project / "a.py"), str(project / "requirements.txt")]
    assert main(["check", "--show-files", "gen"]) == 0
    assert capsys.readouterr().out.splitlines() == [str(project / "gen" / "b.py")]


def test_cli_select_reports_a_code_the_config_ignores(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nignore = ["TP301"]\n')
    write(project / "a.py", LOAD + "s = torch.cuda.amp.GradScaler()\n")
    assert codes(capsys, "a.py") == ["TP202"]
    assert codes(capsys, "--select", "TP301", "a.py") == ["TP301"]  # ruff's precedence: --select starts anew
    assert codes(capsys, "--extend-select", "TP301", "a.py") == ["TP202", "TP301"]  # the command line's layer is later
    assert codes(capsys, "--select", "TP301,TP202", "--ignore", "TP202", "a.py") == ["TP301"]


def test_cli_exclude_extend_exclude_and_per_file_ignores(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nexclude = ["gen/"]\n'
                                      '[tool.torchpatch.per-file-ignores]\n"tests/*" = ["TP301"]\n')
    write(project / "gen" / "g.py", LOAD)
    write(project / "vendor" / "v.py", LOAD)
    write(project / "tests" / "t.py", LOAD)
    write(project / "a.py", LOAD)
    assert codes(capsys, ".") == ["TP301", "TP301"]  # a.py, vendor/v.py; tests/ ignored, gen/ excluded
    assert codes(capsys, "--extend-exclude", "vendor/", ".") == ["TP301"]
    assert codes(capsys, "--exclude", "vendor/,a.py", ".") == ["TP301"]  # replaces: gen/ is checked again
    main(["check", "--show-files", "--exclude", "vendor/,a.py", "."])
    assert {Path(line).name for line in capsys.readouterr().out.splitlines()} == {"g.py", "t.py", "pyproject.toml"}
    assert codes(capsys, "--per-file-ignores", "a.py:TP301", ".") == ["TP301", "TP301"]  # tests/* no longer ignored
    assert codes(capsys, "--extend-per-file-ignores", "a.py:TP301", ".") == ["TP301"]  # vendor/v.py
    assert main(["check", "--per-file-ignores", "a.py", "."]) == 2
    assert "expected PATTERN:CODES" in capsys.readouterr().err
    assert main(["check", "--per-file-ignores", "a.py:TP99999", "."]) == 2
    assert "unknown rule selector 'TP99999'" in capsys.readouterr().err


def test_extend_reads_the_parent_configuration(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nmin-torch = "2.6"\nignore = ["TP202"]\nselect = ["TP1", "TP2", "TP3"]\n')
    write(project / "pkg" / ".torchpatch.toml", 'extend = "../pyproject.toml"\nignore = ["TP301"]\n')
    write(project / "pkg" / "m.py", LOAD + "s = torch.cuda.amp.GradScaler()\n")
    assert codes(capsys, "pkg/m.py") == ["TP202"]  # the file's own ignore replaces the parent's
    settings = show_settings(capsys, "pkg/m.py")
    assert settings["configuration file"] == json.dumps(str(project / "pkg" / ".torchpatch.toml"))
    assert settings["min-torch"] == f'"2.6"  # {project / "pyproject.toml"}'
    assert settings["select"].endswith(str(project / "pyproject.toml"))


def test_extend_errors_are_one_line(project, capsys):
    write(project / "a" / "torchpatch.toml", 'extend = "../b/torchpatch.toml"\n')
    write(project / "b" / "torchpatch.toml", 'extend = "../a/torchpatch.toml"\n')
    write(project / "a" / "m.py", LOAD)
    write(project / "c" / "torchpatch.toml", 'extend = "missing.toml"\n')
    write(project / "c" / "m.py", LOAD)
    assert main(["check", "a/m.py"]) == 2
    err = capsys.readouterr().err
    assert "'extend' makes a cycle" in err and err.count("\n") == 1
    assert main(["check", "c/m.py"]) == 2
    assert "'extend': no such file" in capsys.readouterr().err


def test_dot_torchpatch_toml_comes_first(project, capsys):
    write(project / ".torchpatch.toml", 'ignore = ["TP301"]\n')
    write(project / "torchpatch.toml", 'ignore = ["TP202"]\n')
    write(project / "a.py", LOAD + "s = torch.cuda.amp.GradScaler()\n")
    assert codes(capsys, "a.py") == ["TP202"]
    write(project / ".torchpatch.toml", 'selectt = ["TP301"]\n')
    assert main(["check", "a.py"]) == 2
    assert "unknown key 'selectt'; did you mean 'select'?" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_cache_dir_is_a_warning(project, capsys):
    write(project / "a.py", LOAD)
    locked = project / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["check", "--cache-dir", str(locked / "cache"), "a.py"]) == 1
    finally:
        locked.chmod(0o700)
    assert "warning: cache " in capsys.readouterr().err


def test_a_cache_dir_that_is_a_file_is_a_warning(project, capsys):
    write(project / "a.py", LOAD)
    write(project / "not-a-folder", "")
    assert main(["check", "--cache-dir", "not-a-folder", "a.py"]) == 1
    err = capsys.readouterr().err
    assert "warning: cache not-a-folder: not written" in err and "checks every file again" in err
    assert main(["check", "--cache-dir", "cache", "a.py"]) == 1
    assert "warning" not in capsys.readouterr().err
