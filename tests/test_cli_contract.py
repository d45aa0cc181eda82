"""The CLI contract CI relies on (issue 8 §5): exit codes, valid documents on stdout, stdin, per-file config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main

# A TP301 finding without a fix at every minimum (these tests say --min-torch 2.6): with a pickle_module the
# default stays weights_only=False on every release.
LOAD = 'import pickle\nimport torch\nstate = torch.load("m.pt", pickle_module=pickle)\n'
# Its fix (TP101) is safe only where `export` already returns the training IR, from 2.6 on: tests that
# fix it say `--min-torch 2.6`.
EXPORT = "import torch\nep = torch.export.export_for_training(m, a, strict=False)\n"
FIXABLE_FROM = ["--min-torch", "2.6"]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def torchpatch(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "torchpatch", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=env, timeout=120)


def test_a_broken_pipe_keeps_the_findings_exit_code(project):
    write(project / "many.py", "import torch\n" + 'torch.load("m.pt", pickle_module=pickle)\n' * 3000)  # far more than a pipe buffer
    process = subprocess.Popen([sys.executable, "-m", "torchpatch", "check", "--isolated", "many.py"],
                               cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "TORCHPATCH_CACHE_DIR": str(project / "cache")})
    first = process.stdout.readline()
    process.stdout.close()  # what `| head -1` does
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert b"TP301" in first
    assert b"Traceback" not in stderr and b"BrokenPipeError" not in stderr


def test_the_command_ends_at_once_after_a_check_with_its_output_and_exit_code(project):
    """``python -m torchpatch check`` ends with os._exit once its output is flushed (issue 27: the interpreter's
    teardown was a fifth of a one-file check): every finding line and the cache still get written."""
    write(project / "many.py", "import torch\n" + 'torch.load("m.pt")\n' * 2000)  # output far beyond a buffer
    env = {**os.environ, "NO_COLOR": "1", "TORCHPATCH_CACHE_DIR": str(project / "cache")}
    run = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--isolated", "--output-format", "concise",
                          "many.py"], cwd=project, capture_output=True, env=env, timeout=120)
    assert run.returncode == 1
    assert run.stdout.count(b"TP301") == 2000 and run.stdout.rstrip().endswith(b"option.")
    assert list((project / "cache").rglob("*.json"))  # written before the end
    clean = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--isolated", "--select", "TP301", "-"],
                           cwd=project, input=b"x = 1\n", capture_output=True, env=env, timeout=120)
    assert clean.returncode == 0 and b"All checks passed" in clean.stdout + clean.stderr


def test_diff_exits_1_when_diffs_exist_or_findings_remain(project, capsys):
    fixable = write(project / "fixable.py", EXPORT)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "fixable.py"]) == 1
    assert "+ep = torch.export.export(m, a, strict=False)" in capsys.readouterr().out
    assert fixable.read_text() == EXPORT
    write(project / "unfixable.py", LOAD)  # a finding without a safe fix: no diff, but it remains
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "unfixable.py"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "TP301" in captured.err  # stdout stays a diff that `patch` reads
    write(project / "clean.py", "import torch\n")
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "clean.py"]) == 0


def test_diff_never_says_all_checks_passed_when_it_would_fix(project, capsys):
    # round 7b: `--diff` printed "Would fix 1 finding(s)" and then "All checks passed!", and exited 1.
    write(project / "fixable.py", EXPORT)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "fixable.py"]) == 1
    err = capsys.readouterr().err
    assert "Would fix 1 finding(s) in 1 file(s)." in err and "All checks passed!" not in err
    write(project / "both.py", EXPORT + LOAD.replace("import torch\n", ""))
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "both.py"]) == 1
    err = capsys.readouterr().err
    assert "Would fix 1 finding(s)" in err and "Found 1 finding" in err and "All checks passed!" not in err
    write(project / "clean.py", "import torch\n")
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "clean.py"]) == 0
    assert "All checks passed!" in capsys.readouterr().err


def test_diff_honours_output_format_and_statistics(project, capsys):
    write(project / "a.py", EXPORT + 'x = torch.load("m.pt", pickle_module=pickle)\n')
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "--output-format", "json", "a.py"]) == 1
    captured = capsys.readouterr()
    remaining = json.loads(captured.out)  # stdout stays one JSON document; the diff goes to stderr
    assert [f["code"] for f in remaining] == ["TP301"]
    assert "+ep = torch.export.export(" in captured.err
    assert main(["check", "--isolated", *FIXABLE_FROM, "--diff", "--statistics", "--output-format", "json", "a.py"]) == 1
    assert json.loads(capsys.readouterr().out) == [
        {"code": "TP301", "name": "torch-load-without-weights-only", "count": 1, "fixable": False, "severity": "error"}]


@pytest.mark.parametrize("layout", ["empty", "only-excluded", "only-gitignored"])
def test_nothing_checked_under_named_paths_warns_and_exits_2(project, capsys, layout):
    # ruff warns and exits 0; a CI job that named a folder must not go green on code it never read (issue #25).
    (project / "src").mkdir()
    if layout == "only-excluded":
        write(project / "src" / "build" / "m.py", LOAD)
    if layout == "only-gitignored":
        (project / ".git").mkdir()
        write(project / ".gitignore", "generated/\n")
        write(project / "src" / "generated" / "m.py", LOAD)
    assert main(["check", "--isolated", "src"]) == 2
    captured = capsys.readouterr()
    assert "warning: No Python files found under the given path(s)" in captured.err
    assert "All checks passed!" not in captured.out + captured.err
    assert main(["check", "--isolated", "--exit-zero", "--output-format", "json", "src"]) == 2
    assert json.loads(capsys.readouterr().out) == []


def test_nothing_checked_without_named_paths_or_by_force_exclude_exits_0(project, capsys, monkeypatch):
    write(project / "torchpatch.toml", 'extend-exclude = ["migrations"]\n')
    write(project / "migrations" / "m1.py", LOAD)
    (project / "empty").mkdir()
    monkeypatch.chdir(project / "empty")
    assert main(["check"]) == 0  # nothing named: ruff's warning and exit 0
    assert "warning: No Python files found" in capsys.readouterr().err
    monkeypatch.chdir(project)
    # pre-commit names only excluded files: nothing was meant to be checked
    assert main(["check", "--force-exclude", "migrations/m1.py"]) == 0
    assert "warning: No Python files found" in capsys.readouterr().err
    assert main(["check", "--force-exclude", "migrations/m1.py", "empty"]) == 2


def test_malformed_pyproject_is_exit_2_naming_file_and_line(project, capsys):
    write(project / "pyproject.toml", '[project]\nname = "x"\n[tool.torchpatch\nselect = ["TP"]\n')
    write(project / "a.py", LOAD)
    assert main(["check", "a.py"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml: invalid TOML" in err and "line 3" in err and err.count("\n") == 1


def test_malformed_torchpatch_toml_is_exit_2(project, capsys):
    write(project / "torchpatch.toml", 'select = ["TP"\n')
    write(project / "a.py", LOAD)
    assert main(["check", "a.py"]) == 2
    assert "torchpatch.toml: invalid TOML" in capsys.readouterr().err


@pytest.mark.parametrize("option, value", [("--target-torch", "3.0"), ("--target-torch", "2.16"),
                                           ("--min-torch", "0.1"), ("--min-torch", "2.3")])
def test_releases_outside_the_known_range_are_exit_2(project, capsys, option, value):
    write(project / "a.py", LOAD)
    assert main(["check", "--isolated", option, value, "a.py"]) == 2
    err = capsys.readouterr().err
    assert f"{option}: '{value}' is not a release torchpatch knows (2.4 to 2.15)" in err


def test_config_release_outside_the_known_range_is_exit_2(project, capsys):
    write(project / "torchpatch.toml", 'target-torch = "3.0"\n')
    write(project / "a.py", LOAD)
    assert main(["check", "a.py"]) == 2
    assert "torchpatch.toml: target-torch: '3.0' is not a release" in capsys.readouterr().err


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_fix_show_fixes_keeps_stdout_a_valid_document(project, capsys, output_format):
    write(project / "a.py", EXPORT + 'x = torch.load("m.pt", pickle_module=pickle)\n')
    assert main(["check", "--isolated", *FIXABLE_FROM, "--fix", "--show-fixes", "--output-format", output_format, "a.py"]) == 1
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert "Fixed 1 × TP101 in a.py" in captured.err


def test_statistics_json(project, capsys):
    write(project / "a.py", LOAD + EXPORT.replace("import torch\n", ""))
    write(project / "b.py", LOAD)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--statistics", "--output-format", "json", "."]) == 1
    assert json.loads(capsys.readouterr().out) == [
        {"code": "TP301", "name": "torch-load-without-weights-only", "count": 2, "fixable": False, "severity": "error"},
        {"code": "TP101", "name": "removed-api", "count": 1, "fixable": True, "severity": "error"},
    ]


def test_stdin_is_linted_under_its_filename(project):
    result = torchpatch("check", "--isolated", "--output-format", "json", "--stdin-filename", "pkg/model.py", "-",
                        cwd=project, stdin=b'import torch\nstate = torch.load("m.pt")\n')
    assert result.returncode == 1, result.stderr
    (finding,) = json.loads(result.stdout)
    assert finding["code"] == "TP301" and finding["filename"].endswith("pkg/model.py")
    assert finding["location"] == {"row": 2, "column": 9}


def test_stdin_with_fix_prints_the_fixed_code(project):
    result = torchpatch("check", "--isolated", *FIXABLE_FROM, "--fix", "--stdin-filename", "m.py", "-", cwd=project,
                        stdin=(EXPORT + 'x = torch.load("m.pt", pickle_module=pickle)\n').encode())
    assert result.returncode == 1  # TP301 remains (its fix is unsafe)
    assert result.stdout.decode() == ("import torch\nep = torch.export.export(m, a, strict=False)\n"
                                      'x = torch.load("m.pt", pickle_module=pickle)\n')
    assert b"TP301" in result.stderr
    assert not (project / "m.py").exists()
    clean = torchpatch("check", "--isolated", "--fix", "-", cwd=project, stdin=b"import torch\n")
    assert (clean.returncode, clean.stdout) == (0, b"import torch\n")


def test_stdin_uses_the_configuration_of_its_filename(project):
    write(project / "sub" / "torchpatch.toml", 'ignore = ["TP301"]\n')
    result = torchpatch("check", "--output-format", "json", "--stdin-filename", "sub/m.py", "-", cwd=project,
                        stdin=LOAD.encode())
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_nearest_configuration_applies_to_each_file(project, capsys):
    write(project / "torchpatch.toml", 'ignore = ["TP101"]\n')
    write(project / "a.py", LOAD + EXPORT)
    write(project / "sub" / "pyproject.toml", '[tool.torchpatch]\nignore = ["TP301"]\n')
    write(project / "sub" / "b.py", LOAD + EXPORT)
    write(project / "other" / "pyproject.toml", '[project]\nname = "no-torchpatch-table"\n')  # not a config
    write(project / "other" / "c.py", LOAD + EXPORT)

    def codes(*paths: str) -> list[tuple[str, str]]:
        assert main(["check", "--output-format", "json", *paths]) == 1
        return [(Path(f["filename"]).relative_to(project).as_posix(), f["code"])
                for f in json.loads(capsys.readouterr().out)]

    expected = [("a.py", "TP301"), ("other/c.py", "TP301"), ("sub/b.py", "TP101")]
    assert codes(".") == expected
    # The order of the paths changes nothing: neither the settings nor the order of the output.
    assert codes("sub/b.py", "other", "a.py") == codes("a.py", "other", "sub/b.py") == expected
    assert codes("sub") == [("sub/b.py", "TP101")]


def test_config_option_applies_to_every_file(project, capsys):
    write(project / "sub" / "torchpatch.toml", 'ignore = ["TP301"]\n')
    write(project / "sub" / "b.py", LOAD)
    write(project / "shared.toml", 'select = ["TP301"]\n')
    assert main(["check", "--config", "shared.toml", "--output-format", "json", "sub"]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)] == ["TP301"]


def test_exit_non_zero_on_fix(project, capsys):
    path = write(project / "a.py", EXPORT)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--fix", "a.py"]) == 0
    path.write_text(EXPORT)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--fix", "--exit-non-zero-on-fix", "a.py"]) == 1
    assert "export_for_training" not in path.read_text()
    assert main(["check", "--isolated", *FIXABLE_FROM, "--fix", "--exit-non-zero-on-fix", "a.py"]) == 0  # nothing left to fix


def test_output_file(project, capsys):
    write(project / "a.py", LOAD)
    assert main(["check", "--isolated", "--output-format", "json", "-o", "out/report.json", "a.py"]) == 1
    assert capsys.readouterr().out == ""
    assert json.loads((project / "out" / "report.json").read_text())[0]["code"] == "TP301"
    assert main(["check", "--isolated", "--output-file", "report.txt", "a.py"]) == 1
    report = (project / "report.txt").read_text()
    assert "TP301" in report and "Found 1 finding (1 error)." in report and "\033[" not in report


def test_summary_line_counts_severities(project, capsys):
    write(project / "a.py", LOAD + EXPORT.replace("import torch\n", "")
          + "s = torch.cuda.amp.GradScaler()\n")
    assert main(["check", "--isolated", *FIXABLE_FROM, "a.py"]) == 1
    out = capsys.readouterr().out
    assert "Found 3 findings (2 errors, 1 warning)." in out


def test_a_failed_write_is_never_reported_as_clean(project, capsys, monkeypatch):
    from torchpatch.frontends import check

    write(project / "a.py", EXPORT)

    def refuse(result):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(check, "write_fixed", refuse)
    assert main(["check", "--isolated", *FIXABLE_FROM, "--fix", "--show-fixes", "--exit-zero", "a.py"]) == 1
    captured = capsys.readouterr()
    assert "Fixed" not in captured.out + captured.err
    assert "All checks passed!" not in captured.out + captured.err
    assert "a.py: not written: [Errno 13] Permission denied" in captured.err
    assert "Found 1 finding." in captured.out  # the fix that was not written still stands
