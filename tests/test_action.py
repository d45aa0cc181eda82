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


def run_check_step(project: Path, tmp_path: Path, args: str = "") -> tuple[int, dict]:
    output = tmp_path / "github_output"
    output.write_text("")
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    environment = {**os.environ, "GITHUB_OUTPUT": str(output), "TORCHPATCH_PATHS": inputs["paths"],
                   "TORCHPATCH_ARGS": args, "TORCHPATCH_SARIF": inputs["sarif-file"]}
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
