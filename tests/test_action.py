"""The composite GitHub Action: its shape, and its check step's script run here as the runner runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "legacy-project"
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def step(step_id_or_name: str) -> dict:
    for candidate in ACTION["runs"]["steps"]:
        if step_id_or_name in (candidate.get("id"), candidate.get("name")):
            return candidate
    raise AssertionError(step_id_or_name)


def test_action_is_composite_and_uploads_sarif():
    assert ACTION["runs"]["using"] == "composite"
    uses = [s.get("uses", "") for s in ACTION["runs"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    upload = next(s for s in ACTION["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    # Inputs reach the scripts only through the environment (no ${{ }} pasted into shell code).
    for candidate in ACTION["runs"]["steps"]:
        assert "${{" not in candidate.get("run", "")


def run_check_step(project: Path, tmp_path: Path, args: str = "", paths: str | None = None,
                   cache_dir: Path | None = None) -> tuple[int, dict]:
    output = tmp_path / "github_output"
    output.write_text("")
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    environment = {**os.environ, "GITHUB_OUTPUT": str(output), "TORCHPATCH_PATHS": inputs["paths"] if paths is None else paths,
                   "TORCHPATCH_ARGS": args, "TORCHPATCH_SARIF": inputs["sarif-file"],
                   "TORCHPATCH_CACHE_DIR": str(cache_dir or tmp_path / "torchpatch-cache"),
                   "TORCHPATCH_USE_CACHE": inputs["cache"]}
    process = subprocess.run(["bash", "-e", "-c", step("check")["run"]], cwd=project, env=environment,
                             capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return process.returncode, outputs


def test_check_step_writes_sarif_and_reports_the_exit_code(tmp_path):
    project = tmp_path / "legacy-project"
    shutil.copytree(EXAMPLE, project)
    status, outputs = run_check_step(project, tmp_path)
    assert status == 0 and outputs["exit-code"] == "1"  # findings: the upload still runs, the last step fails
    sarif = json.loads((project / "torchpatch.sarif").read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) >= 19
    status, outputs = run_check_step(project, tmp_path, args="--target-torch banana")
    assert status == 2 and outputs["exit-code"] == "2"  # a usage error fails the step itself


def test_paths_are_one_a_line_and_may_hold_spaces(tmp_path):
    project = tmp_path / "project"
    (project / "my models").mkdir(parents=True)
    (project / "my models" / "a.py").write_text('import torch\nstate = torch.load("m.pt")\n')
    (project / "other").mkdir()
    (project / "other" / "b.py").write_text('import torch\nstate = torch.load("m.pt")\n')
    (project / "ignored.py").write_text('import torch\nstate = torch.load("m.pt")\n')
    status, outputs = run_check_step(project, tmp_path, paths="my models\n  other  \n\n")
    assert status == 0 and outputs["exit-code"] == "1"
    results = json.loads((project / "torchpatch.sarif").read_text())["runs"][0]["results"]
    files = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    assert files == ["my%20models/a.py", "other/b.py"]
    status, outputs = run_check_step(project, tmp_path, paths="")  # empty: the repository
    assert len(json.loads((project / "torchpatch.sarif").read_text())["runs"][0]["results"]) == 3


def test_the_result_cache_and_pip_are_kept_between_runs(tmp_path):
    caches = [s for s in ACTION["runs"]["steps"] if s.get("uses", "").startswith("actions/cache@")]
    assert len(caches) == 2 and all(s["if"] == "inputs.cache == 'true'" for s in caches)
    check = step("check")
    results_cache = next(s for s in caches if "torchpatch-results" in s["with"]["key"])
    assert results_cache["with"]["path"] == check["env"]["TORCHPATCH_CACHE_DIR"]
    assert any(s["with"]["path"] == "${{ steps.pip-cache.outputs.dir }}" for s in caches)
    project = tmp_path / "legacy-project"
    shutil.copytree(EXAMPLE, project)
    cache_dir = tmp_path / "restored-cache"
    run_check_step(project, tmp_path, cache_dir=cache_dir)
    assert (cache_dir / "CACHEDIR.TAG").is_file()  # the folder actions/cache saves after the job
