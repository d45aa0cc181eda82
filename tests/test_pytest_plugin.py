"""The pytest plugin under real torch: warnings placed at the user's lines, with and without xdist (issue #24)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import runtime_accuracy  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _pytest(project: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *options], cwd=project,
                          capture_output=True, text=True, timeout=600)


def _project(tmp_path: Path, code: str) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_small.py").write_text(code, encoding="utf-8")
    return tmp_path


SMALL = '''\
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


def test_softmax():
    F.softmax(torch.ones(2, 3))


def test_loss():
    nn.MSELoss(size_average=False)


def test_checkpoint():
    torch.utils.checkpoint.checkpoint(lambda t: t * 2, torch.ones(2, requires_grad=True))


def test_own_warning():
    warnings.warn("the project's own", UserWarning)


def test_nothing_of_torchpatch_loaded():
    assert not [name for name in sys.modules if name.startswith("torchpatch.engine")]
'''


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "xdist-2"])
def test_suite_lines_and_codes(torch, tmp_path, workers):
    """The done-when measure of #24 on our 40-snippet suite: every marked line, at its file and line, with the
    rule that covers it (TP002 where none does); `check --from-warnings` on the saved output finds the same."""
    marks = runtime_accuracy.expected_lines(runtime_accuracy.SUITE.read_text(encoding="utf-8"))
    plugin_rows, log_rows, output = runtime_accuracy.run_suite(runtime_accuracy.SUITE, workers, tmp_path)
    assert "passed" in output and "failed" not in output
    for rows in (plugin_rows, log_rows):
        result = runtime_accuracy.score(rows, marks)
        assert result.line_share >= 0.95 and result.code_share >= 0.95, result
        assert result.unexpected == []  # the project's own warnings.warn is not torch's
    by_row = {row["location"]["row"]: row for row in plugin_rows}
    assert all(row["runtime"] is True and row["count"] >= 1 and row["tests"] for row in plugin_rows)
    # stacklevel pointed inside torch: nn.MSELoss(size_average=False) warns from torch/nn/modules/loss.py
    mse = next(row for row in plugin_rows if "size_average=False" in _line(tmp_path, row))
    assert mse["torch_location"].endswith("torch/nn/modules/loss.py:48") or "loss.py" in mse["torch_location"]
    assert mse["tests"] == ["test_torch_snippets.py::test_mse_loss_size_average"]
    checkpoint = next(row for row in plugin_rows if row["code"] == "TP401")
    assert checkpoint["fix"] is not None and "use_reentrant" in checkpoint["torch_message"]
    assert len(by_row) == len(plugin_rows)  # one row per line


def _line(project: Path, row: dict) -> str:
    return (project / runtime_accuracy.TEST_FILE).read_text().splitlines()[row["location"]["row"] - 1]


def test_installed_but_not_enabled_changes_nothing(torch, tmp_path):
    project = _project(tmp_path, SMALL)
    with_plugin = _pytest(project, "-q", "-W", "default")
    without_plugin = _pytest(project, "-q", "-W", "default", "-p", "no:torchpatch")

    def normalised(text: str) -> str:
        return re.sub(r" in \d+\.\d+s", " in Ns", text)

    assert with_plugin.returncode == without_plugin.returncode == 0
    assert normalised(with_plugin.stdout) == normalised(without_plugin.stdout)
    assert "torchpatch" not in with_plugin.stdout


def test_summary_strict_and_restored_state(torch, tmp_path):
    project = _project(tmp_path, SMALL)
    (project / "conftest.py").write_text(
        "import json, warnings, pytest\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_unconfigure(config):\n"
        "    import torch\n"
        "    state = {'warn_always': torch.is_warn_always_enabled(),\n"
        "             'typed_storage': torch.storage._get_always_warn_typed_storage_removal(),\n"
        "             'showwarnmsg': warnings._showwarnmsg.__module__ == 'warnings',\n"
        "             'warn': warnings.warn.__module__ in ('warnings', '_warnings', None)}\n"
        "    open('state.json', 'w').write(json.dumps(state))\n", encoding="utf-8")
    run = _pytest(project, "--torchpatch-strict", "-k", "not nothing_of_torchpatch")
    assert run.returncode == 1, run.stdout
    assert "4 passed" in run.stdout
    assert "--torchpatch-strict: 3 lines hit a torch deprecation warning: the session fails" in run.stdout
    summary = run.stdout.split("torchpatch: PyTorch warnings", 1)[1]
    assert "test_small.py:11: TP209 [1 hit, 1 test] UserWarning: Implicit dimension choice for softmax" in summary
    assert "test_small.py:15: TP216" in summary and "torch/nn/modules/loss.py:48" in summary
    assert "test_small.py:19: TP401" in summary and "fix: Pass `use_reentrant=False`" in summary
    assert "test_small.py:23" not in summary
    assert json.loads((project / "state.json").read_text()) == {
        "warn_always": False, "typed_storage": False, "showwarnmsg": True, "warn": True}
    assert _pytest(project, "--torchpatch", "-k", "not nothing_of_torchpatch").returncode == 0


def test_report_formats(torch, tmp_path):
    project = _project(tmp_path, SMALL)
    run = _pytest(project, "--torchpatch-report", "out/report.sarif", "-k", "checkpoint")
    assert run.returncode == 0, run.stdout + run.stderr
    sarif = json.loads((project / "out" / "report.sarif").read_text())
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "TP401" and result["properties"]["runtime"] is True
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 19
    run = _pytest(project, "--torchpatch-report", "report.txt", "--torchpatch-format", "github", "-k", "softmax")
    assert (project / "report.txt").read_text().startswith("::warning title=torchpatch (TP209),file=test_small.py,line=11")
    bad = _pytest(project, "--torchpatch-report", "report.xml")
    assert bad.returncode == 4 and "unknown report format" in bad.stderr


def test_report_from_the_plugin_reads_back(torch, tmp_path):
    """The saved output of a --torchpatch run is enough for `check --from-warnings` (the plugin's own section)."""
    project = _project(tmp_path, SMALL)
    run = _pytest(project, "--torchpatch")
    (project / "ci.log").write_text(run.stdout, encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--no-cache", "--output-format", "json",
                            "--from-warnings", "ci.log", "test_small.py"], cwd=project, capture_output=True,
                           text=True)
    rows = json.loads(check.stdout)
    assert check.returncode == 1
    found = sorted((row["location"]["row"], row["code"], row.get("runtime", False)) for row in rows)
    # each line is found both ways (a static rule and at run time): one finding each
    assert found == [(11, "TP209", True), (15, "TP216", True), (19, "TP401", True)]
