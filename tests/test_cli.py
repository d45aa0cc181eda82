"""The CLI as a user meets it: options, exit codes, output formats, configuration, suppression."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main

LOAD = 'import torch\nstate = torch.load("m.pt")\n'
# Still a TP301 finding (without a fix) at a 2.6+ minimum: a pickle_module keeps weights_only=False.
LOAD_WITH_PICKLE = 'import pickle\nimport torch\nstate = torch.load("m.pt", pickle_module=pickle)\n'
EXPORT = "import torch\nep = torch.export.export_for_training(m, a, strict=False)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def check_json(capsys, *args) -> tuple[int, list[dict]]:
    code = main(["check", "--output-format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_exit_codes(project, capsys):
    write(project / "clean.py", "import torch\nx = torch.zeros(2)\n")
    assert main(["check", "clean.py"]) == 0
    write(project / "bad.py", LOAD)
    assert main(["check", "bad.py"]) == 1
    assert main(["check", "--exit-zero", "bad.py"]) == 0
    assert main(["check", "--select", "NOPE1", "bad.py"]) == 2
    assert main(["check", "--target-torch", "banana", "bad.py"]) == 2
    assert main(["check", "--no-such-flag"]) == 2


def test_json_fields_match_ruff(project, capsys):
    write(project / "a.py", EXPORT)
    code, findings = check_json(capsys, "--min-torch", "2.6", "a.py")  # export_for_training -> export: safe from 2.6
    assert code == 1
    (finding,) = findings
    # ruff's field names, plus the severity (issue 12: error for removed APIs and security).
    assert set(finding) == {"code", "name", "message", "severity", "url", "filename", "location", "end_location",
                            "fix", "noqa_row"}
    assert finding["code"] == "TP101" and finding["name"] == "removed-api" and finding["severity"] == "error"
    assert finding["filename"] == str((project / "a.py").resolve())
    assert finding["location"] == {"row": 2, "column": 6} and finding["end_location"] == {"row": 2, "column": 38}
    assert finding["noqa_row"] == 2
    assert finding["fix"]["applicability"] == "safe"
    # a rename within the module: only the last name is edited
    assert finding["fix"]["edits"] == [{"content": "export", "location": {"row": 2, "column": 19},
                                        "end_location": {"row": 2, "column": 38}}]
    assert "removed in 2.11" in finding["message"]


def test_concise_and_full_formats(project, capsys):
    write(project / "a.py", LOAD)
    assert main(["check", "--output-format", "concise", "a.py"]) == 1  # findings remain
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("a.py:2:9: TP301 `torch.load` without `weights_only=`")
    assert main(["check", "a.py"]) == 1  # findings remain
    out = capsys.readouterr().out
    assert '2 | state = torch.load("m.pt")' in out
    assert "  |         ^^^^^^^^^^^^^^^^^^ TP301" in out
    assert "help: Pass `weights_only=True`" in out


def test_github_and_sarif_formats(project, capsys):
    write(project / "a.py", LOAD)
    assert main(["check", "--output-format", "github", "a.py"]) == 1  # findings remain
    assert capsys.readouterr().out.startswith("::error title=torchpatch (TP301),file=a.py,line=2,col=9,")
    assert main(["check", "--output-format", "sarif", "a.py"]) == 1  # findings remain
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "TP301"
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 9


def test_statistics(project, capsys):
    write(project / "a.py", LOAD_WITH_PICKLE + EXPORT.replace("import torch\n", ""))
    write(project / "b.py", LOAD_WITH_PICKLE)
    assert main(["check", "--statistics", "--min-torch", "2.6", "."]) == 1  # findings remain
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["2", "TP301", "torch-load-without-weights-only"]
    assert lines[1].split() == ["1", "TP101", "[*]", "removed-api"]


def test_selection(project, capsys):
    write(project / "a.py", LOAD + EXPORT.replace("import torch\n", ""))
    assert {f["code"] for f in check_json(capsys, "a.py")[1]} == {"TP301", "TP101"}
    assert {f["code"] for f in check_json(capsys, "--select", "TP3", "a.py")[1]} == {"TP301"}
    assert {f["code"] for f in check_json(capsys, "--ignore", "TP301", "a.py")[1]} == {"TP101"}
    assert {f["code"] for f in check_json(capsys, "--select", "TP101", "--extend-select", "TP301", "a.py")[1]} == {"TP301", "TP101"}
    assert {f["code"] for f in check_json(capsys, "--select", "TOR102", "a.py")[1]} == {"TP301"}
    assert {f["code"] for f in check_json(capsys, "--select", "removed-api", "a.py")[1]} == {"TP101"}


def test_noqa(project, capsys):
    write(project / "a.py", 'import torch\na = torch.load("m.pt")  # noqa\nb = torch.load("m.pt")  # noqa: TP301\n'
                            'c = torch.load("m.pt")  # noqa: TOR102\nd = torch.load("m.pt")  # noqa: TP999\n')
    assert [f["location"]["row"] for f in check_json(capsys, "a.py")[1]] == [5]
    write(project / "b.py", "# torchpatch: noqa\n" + LOAD)
    write(project / "c.py", "# torchpatch: noqa: TP301\n" + LOAD + EXPORT)
    assert [(Path(f["filename"]).name, f["code"]) for f in check_json(capsys, "b.py", "c.py")[1]] == [("c.py", "TP101")]


def test_pyproject_config_and_per_file_ignores(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nignore = ["TP101"]\n[tool.torchpatch.per-file-ignores]\n"tests/*" = ["TP301"]\n')
    write(project / "src/a.py", LOAD + EXPORT)
    write(project / "tests/test_a.py", LOAD)
    assert [(Path(f["filename"]).name, f["code"]) for f in check_json(capsys, ".")[1]] == [("a.py", "TP301")]


def test_torchpatch_toml_and_unknown_key(project, capsys):
    write(project / "a.py", EXPORT)
    write(project / "torchpatch.toml", 'target-torch = "2.8"\n')
    assert check_json(capsys, "a.py")[1] == []  # export_for_training was only deprecated in 2.9
    write(project / "torchpatch.toml", 'selectt = ["TP"]\n')
    assert main(["check", "a.py"]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'selectt'" in err and err.count("\n") == 1
    write(project / "torchpatch.toml", 'min-torch = "two"\n')
    assert main(["check", "a.py"]) == 2


@pytest.mark.parametrize("pin_file, text, expected", [
    ("requirements.txt", "numpy\ntorch>=2.6,<3  # pinned\n", "2.6"),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch~=2.8.0"]\n', "2.8"),
    ("setup.cfg", "[options]\ninstall_requires =\n    torch==2.5.1\n", "2.5"),
    ("constraints.txt", "torch>=2.11\n", "2.11"),
])
def test_min_torch_is_read_from_pins(project, capsys, pin_file, text, expected):
    write(project / pin_file, text)
    write(project / "a.py", "import torch.distributed._tensor as dt\n")
    _, findings = check_json(capsys, "a.py")
    # torch.distributed.tensor exists from 2.5: the fix is safe exactly when the pins say >= 2.5.
    assert findings[0]["fix"]["applicability"] == ("safe" if expected != "2.4" else "unsafe")
    if expected == "2.4":
        assert "your minimum is 2.4" in findings[0]["fix"]["message"]


def test_min_torch_option_overrides_pins(project, capsys):
    write(project / "requirements.txt", "torch>=2.6\n")
    write(project / "a.py", "import torch.distributed._tensor as dt\n")
    _, findings = check_json(capsys, "--min-torch", "2.4", "a.py")
    assert findings[0]["fix"]["applicability"] == "unsafe"


def test_target_torch_limits_rules(project, capsys):
    write(project / "a.py", EXPORT)
    assert check_json(capsys, "--target-torch", "2.8", "a.py")[1] == []
    message = check_json(capsys, "--target-torch", "2.10", "a.py")[1][0]["message"]
    assert "deprecated since PyTorch 2.9, removed in 2.11" in message


def test_discovery_excludes(project, capsys):
    for folder in (".venv/lib", "build", "node_modules/x", "pkg/__pycache__", "site-packages/y"):
        write(project / folder / "m.py", LOAD)
    write(project / "keep" / "m.py", LOAD)
    write(project / "keep" / "n.pyi", LOAD)
    write(project / "keep" / "data.txt", LOAD)
    names = sorted(str(Path(f["filename"]).relative_to(project)) for f in check_json(capsys, ".")[1])
    assert names == ["keep/m.py", "keep/n.pyi"]
    write(project / "torchpatch.toml", 'extend-exclude = ["keep/n.pyi"]\n')
    names = sorted(str(Path(f["filename"]).relative_to(project)) for f in check_json(capsys, ".")[1])
    assert names == ["keep/m.py"]


def test_rule_command(capsys):
    assert main(["rule", "TP301"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("# torch-load-without-weights-only (TP301)")
    assert "## What it does" in page and "## Why is this bad?" in page and "## Fix safety" in page
    assert main(["rule", "TOR102"]) == 0
    assert capsys.readouterr().out == page
    assert main(["rule", "--all"]) == 0
    assert "TP301  torch-load-without-weights-only" in capsys.readouterr().out
    assert main(["rule", "TP000"]) == 2


def test_python_dash_m_and_version():
    result = subprocess.run([sys.executable, "-m", "torchpatch", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("torchpatch ")


_QUICK_ARGVS = [
    ["check"], ["check", "a.py"], ["check", "--no-cache", "a.py", "b/"], ["check", "a.py", "--exit-zero", "-q"],
    ["check", "--output-format", "json", "x.py"], ["check", "--output-format=concise", "--isolated", "x.py"],
    ["check", "-j", "2", "."], ["check", "--jobs=3", "--statistics", "."], ["check", "--fix", "--diff", "--unsafe-fixes",
    "--show-fixes", "--force-exclude", "--exit-non-zero-on-fix", "a.py"],
    ["check", "--cache-dir", "c", "--select", "TP3,TP1", "--select=ALL", "--ignore=", "--extend-select", "TP9", "."],
    ["check", "-o", "r.txt", "--output-file=s.txt", "--config", "p.toml", "--target-torch", "2.8", "--min-torch=2.6", "a.py"],
]
_PARSER_ONLY = [
    ["check", "a.py", "--no-cache", "b.py"], ["check", "-"], ["check", "--help"],
    ["check", "-j2", "."], ["check", "-j", "0", "."], ["check", "--output-format", "xml"], ["check", "--jobs"],
    ["check", "--no-cach"], ["--version"], ["rule"], ["check", "-j", "-1"], ["check", "--output-format", "--quiet"],
    ["check", "-o=r.txt"], ["check", "--select"], ["check", "--cache-dir", "-q"], ["check", "--per-file-ignores", "a:TP1"],
]


@pytest.mark.parametrize("argv", _QUICK_ARGVS, ids=" ".join)
def test_quick_arguments_read_what_the_parser_reads(argv):
    """A plain ``check`` is read without argparse (issue 27: start-up); the namespace is the parser's."""
    from torchpatch.frontends import check
    from torchpatch.frontends.cli import build_parser

    parsed = {k: v for k, v in vars(build_parser("check").parse_args(argv)).items() if not k.startswith("_")}
    quick = check.quick_arguments(argv)
    assert quick is not None and vars(quick) == parsed


@pytest.mark.parametrize("argv", _PARSER_ONLY, ids=" ".join)
def test_quick_arguments_leave_everything_else_to_the_parser(argv):
    from torchpatch.frontends import check

    assert check.quick_arguments(argv) is None


def test_quick_defaults_are_the_parser_s():
    from torchpatch.frontends import check
    from torchpatch.frontends.cli import build_parser

    parsed = {k: v for k, v in vars(build_parser("check").parse_args(["check"])).items() if not k.startswith("_")}
    assert parsed == check.PLAIN_DEFAULTS  # a new option of check goes into PLAIN_DEFAULTS too
