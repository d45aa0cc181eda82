"""The flake8 plugin under real flake8: the example project's findings, columns exactly as torchpatch's, config applied."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flake8")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "legacy-project"
_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<column>\d+): (?P<code>[A-Z]+\d+) (?P<message>.*)$")


def flake8(*args: str, cwd: Path) -> tuple[int, list[dict]]:
    process = subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True)
    assert "Traceback" not in process.stderr, process.stderr
    found = []
    for line in process.stdout.splitlines():
        match = _FLAKE8_LINE.match(line)
        assert match, line
        found.append({**match.groupdict(), "row": int(match["row"]), "column": int(match["column"])})
    return process.returncode, found


def torchpatch_json(*args: str, cwd: Path) -> list[dict]:
    process = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--output-format", "json", *args],
                             cwd=cwd, capture_output=True, text=True)
    return json.loads(process.stdout)


def test_plugin_is_registered_under_tp():
    process = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "torchpatch" in process.stdout


def test_flake8_select_tp_finds_the_example_projects_findings(tmp_path):
    project = tmp_path / "legacy-project"
    shutil.copytree(EXAMPLE, project)
    code, found = flake8("--select", "TP", ".", cwd=project)
    expected = [f for f in torchpatch_json(".", cwd=project) if f["filename"].endswith(".py")]
    assert code == 1
    assert len(found) == len(expected) >= 19
    # The same place for every finding: flake8's 1-based column is torchpatch's column, not one off (TorchFix's is).
    ours = sorted((Path(f["filename"]).name, f["location"]["row"], f["location"]["column"], f["code"]) for f in expected)
    theirs = sorted((Path(f["path"]).name, f["row"], f["column"], f["code"]) for f in found)
    assert theirs == ours


def test_columns_count_characters_as_flake8_and_pycodestyle_do(tmp_path):
    # `torch.load` starts at character 14 (1-based 15) of the line; in UTF-8 bytes it would be 17.
    (tmp_path / "m.py").write_text('import torch\nname = "ééé"; torch.load(name)  \n', encoding="utf-8")
    code, found = flake8("--select", "TP,W291", "m.py", cwd=tmp_path)
    by_code = {f["code"]: f for f in found}
    assert by_code["TP301"]["row"] == 2 and by_code["TP301"]["column"] == 15
    assert by_code["W291"]["column"] == 31  # pycodestyle's trailing whitespace, same character counting
    assert code == 1


def test_noqa_and_flake8_selection_apply(tmp_path):
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "a = torch.load(p)  # noqa: TP301\n"
        "b = torch.load(p)  # noqa: TOR102\n"  # TorchFix's code for the same rule
        "c = torch.load(p)\n"
        "s = torch.cuda.amp.GradScaler()\n"
    )
    _, found = flake8("--select", "TP", "m.py", cwd=tmp_path)
    assert [(f["row"], f["code"]) for f in found] == [(4, "TP301"), (5, "TP202")]
    _, found = flake8("--select", "TP2", "m.py", cwd=tmp_path)
    assert [(f["row"], f["code"]) for f in found] == [(5, "TP202")]


def test_project_configuration_applies_as_in_the_cli(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchpatch]\nignore = ["TP202"]\nmin-torch = "2.6"\n')
    # From the configured 2.6 minimum a bare torch.load is not reported (TP301); one with a pickle_module is.
    (tmp_path / "m.py").write_text("import pickle\nimport torch\ns = torch.cuda.amp.GradScaler()\nm = torch.load(p)\n"
                                   "n = torch.load(p, pickle_module=pickle)\n")
    _, found = flake8("--select", "TP", "m.py", cwd=tmp_path)
    assert [(f["code"], f["row"]) for f in found] == [("TP301", 5)]
    assert found[0]["message"] == torchpatch_json("m.py", cwd=tmp_path)[0]["message"]


def test_invalid_configuration_is_one_finding_not_a_traceback(tmp_path):
    (tmp_path / "torchpatch.toml").write_text('target-torch = "banana"\n')
    (tmp_path / "m.py").write_text("import torch\nm = torch.load(p)\n")
    code, found = flake8("--select", "TP", "m.py", cwd=tmp_path)
    assert code == 1
    assert [(f["row"], f["code"]) for f in found] == [(1, "TP001")]
    assert "target-torch" in found[0]["message"]
