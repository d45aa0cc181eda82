"""The pre-commit hooks as a user runs them: `pre-commit try-repo` installs this repository and runs the hooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")  # pre-commit's own dependency

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "legacy-project"
NOTEBOOK = {
    "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
               "source": ["import torch\n", "state = torch.load('m.pt')\n"]}],
    "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
}



def git(*args: str, cwd: Path) -> None:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=environment)


def test_hooks_file_declares_both_hooks():
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"torchpatch", "torchpatch-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert {"python", "jupyter"} <= set(hook["types_or"])
        assert hook["require_serial"] is True
        assert hook["entry"].startswith("torchpatch check ") and "--force-exclude" in hook["entry"].split()
    assert "--fix" in hooks["torchpatch-fix"]["entry"].split()
    import re

    for hook in hooks.values():  # dependency files pass `files` (and the `text` type); other text files do not
        pattern = re.compile(hook["files"])
        assert "text" in hook["types_or"]
        for name in ("a.py", "pkg/b.pyi", "nb.ipynb", "requirements.txt", "requirements/base.txt", "requirements-dev.txt",
                     "constraints.txt", "pyproject.toml", "sub/setup.cfg", "environment.yml", "environment-gpu.yaml"):
            assert pattern.search(name), name
        for name in ("README.md", "notes.txt", "data.json", "Makefile", "pyproject.toml.bak"):
            assert not pattern.search(name), name
    assert "--fix" not in hooks["torchpatch"]["entry"].split()


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory) -> Path:
    """This project's installable files, committed in a git repository of their own (what try-repo clones)."""
    repository = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repository / name)
    shutil.copytree(ROOT / "src", repository / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    git("init", "-q", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "torchpatch", cwd=repository)
    return repository


@pytest.fixture(scope="module")
def try_repo_run(hook_repository, tmp_path_factory) -> tuple[Path, dict[str, str], int, list[str], str]:
    """`pre-commit try-repo` with both hooks, once (each try-repo builds the hooks' environment anew, ~20 s).

    The project: the example project, a notebook, and an excluded folder with findings, staged in git.
    """
    project = tmp_path_factory.mktemp("project") / "legacy-project"
    shutil.copytree(EXAMPLE, project)
    (project / "notebook.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (project / "vendored").mkdir()
    (project / "vendored" / "old.py").write_text("import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    (project / "torchpatch.toml").write_text('extend-exclude = ["vendored"]\n')
    # a dependency file with a vulnerable pin (TP304) and a text file that is not one
    (project / "requirements-dev.txt").write_text("torch==2.5.1\n")
    (project / "NOTES.txt").write_text("import torch; torch.load('m.pt')\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    expected = expected_findings(project)
    before = (project / "legacy" / "train.py").read_text()
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
                   "PRE_COMMIT_COLOR": "never"}
    environment.pop("VIRTUAL_ENV", None)
    process = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), "--all-files",
                              "--verbose"], cwd=project, capture_output=True, text=True, env=environment, timeout=600)
    output = process.stdout + process.stderr
    report, _, fix = output.partition("- hook id: torchpatch-fix")
    return project, {"report": report, "fix": fix, "all": output}, process.returncode, expected, before


def expected_findings(project: Path) -> list[str]:
    process = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--output-format", "json", "."],
                             cwd=project, capture_output=True, text=True)
    found = json.loads(process.stdout)
    assert len(found) >= 20
    return [f"{Path(f['filename']).relative_to(project.resolve()).as_posix()}:"
            f"{'cell %d:' % f['cell'] if f.get('cell') else ''}{f['location']['row']}:{f['location']['column']}: {f['code']}"
            for f in found]


def test_try_repo_finds_the_example_projects_findings(try_repo_run):
    _, output, returncode, expected, _ = try_repo_run
    assert returncode == 1, output["all"]
    assert "- hook id: torchpatch\n" in output["report"], output["all"]
    missing = [where for where in expected if where not in output["report"]]
    assert not missing, output["all"]
    assert any(where.startswith("notebook.ipynb:cell 1:2:") for where in expected)  # the jupyter type is passed
    assert "files were modified" not in output["report"]
    assert "requirements-dev.txt:1:1: TP304" in output["report"], output["all"]  # the vulnerable pin, at commit time
    assert "NOTES.txt" not in output["all"]


def test_try_repo_fix_hook_fixes_and_reports_the_rest(try_repo_run):
    project, output, _, _, before = try_repo_run
    assert "files were modified by this hook" in output["fix"], output["all"]
    after = (project / "legacy" / "train.py").read_text()
    assert "with amp.autocast(dtype=torch.float16)" in before
    assert 'with torch.amp.autocast("cuda", dtype=torch.float16)' in after
    # the GradScaler construction keeps its old form (its fix is unsafe: it builds the base class), and so
    # does the import it needs
    assert "amp.GradScaler(2.0 ** 14)" in after and "from torch.cuda import amp" in after
    assert "TP301" in output["fix"]  # no safe fix (it changes what loads): still reported


def test_try_repo_honours_the_configurations_exclude(try_repo_run):
    project, output, _, _, _ = try_repo_run
    assert "legacy/train.py:" in output["report"]
    assert "vendored/old.py" not in output["all"]
    assert "torch.cuda.amp.GradScaler" in (project / "vendored" / "old.py").read_text()  # not fixed either
