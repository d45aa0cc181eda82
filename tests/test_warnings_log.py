"""`torchpatch check --from-warnings LOG`: pytest warnings summaries, plain Python logs, bad input (issue #24)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.engine.warnings_log import LogError, parse_log

PYTEST_LOG = """\
============================= test session starts ==============================
collected 3 items

test_model.py ...                                                        [100%]

=============================== warnings summary ===============================
test_model.py::test_softmax
test_model.py::test_again
  /work/project/test_model.py:4: UserWarning: Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an argument.
    F.softmax(x)

test_model.py::test_cross
  /work/project/test_model.py:5: UserWarning: Using torch.cross without specifying the dim arg is deprecated.
  Please either pass the dim explicitly or simply use torch.linalg.cross.
    torch.cross(a, b)

test_model.py::test_loss
  /usr/lib/python3.11/site-packages/torch/nn/modules/loss.py:48: UserWarning: size_average and reduce args will be deprecated, please use reduction='sum' instead.
    self.reduction: str = _Reduction.legacy_get_string(size_average, reduce)

test_model.py::test_marks
  /usr/lib/python3.11/site-packages/_pytest/mark/structures.py:1: PytestUnknownMarkWarning: Unknown pytest.mark.slow
    warnings.warn(

test_model.py: 12 warnings
  /work/project/test_model.py:9: UserWarning: the project's own message
    warn("x")

-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html
======================== 3 passed, 3 warnings in 0.10s =========================
"""


def test_pytest_summary():
    hits = parse_log(PYTEST_LOG)
    placed = [(Path(h.path).name, h.row, h.count, h.inside_torch, h.uncertain) for h in hits]
    assert placed == [("test_model.py", 4, 2, False, False), ("test_model.py", 5, 1, False, False),
                      ("loss.py", 48, 1, True, False), ("test_model.py", 9, 12, False, True)]
    assert hits[0].tests == ["test_model.py::test_softmax", "test_model.py::test_again"]
    assert hits[1].message.endswith("Please either pass the dim explicitly or simply use torch.linalg.cross.")


def test_plain_python_log():
    log = ("snippet.py:3: UserWarning: The use of `x.T` on tensors of dimension other than 2 is deprecated\n"
           "  y = x.T\n"
           "snippet.py:7: torch.jit.TracerWarning: Converting a tensor to a Python boolean\n")
    hits = parse_log(log)
    assert [(h.path, h.row, h.category) for h in hits] == [
        ("snippet.py", 3, "UserWarning"), ("snippet.py", 7, "torch.jit.TracerWarning")]


def test_a_pytest_log_without_warnings_is_no_error():
    assert parse_log("=== test session starts ===\n\n=== 2 passed in 0.01s ===\n") == []


@pytest.mark.parametrize("text", ["hello\nworld\n", "Traceback (most recent call last):\n  x\n"])
def test_not_a_log(text):
    with pytest.raises(LogError, match="not a pytest output or a Python warnings log"):
        parse_log(text)


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchpatch", "check", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_cli_bad_log_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "log.txt").write_text("nothing to see\n")
    (tmp_path / "binary.log").write_bytes(b"\0\1\2")
    for name in ("log.txt", "binary.log", "missing.log"):
        run = _check(tmp_path, "--from-warnings", name)
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
        assert name in run.stderr


def test_cli_merges_static_and_runtime(tmp_path):
    (tmp_path / "model.py").write_text(
        "import torch\n\nx = torch.ones(3)\ns = x.storage()\ny = torch.ones(2, 3, 4).T\n", encoding="utf-8")
    (tmp_path / "run.log").write_text(
        "model.py:4: UserWarning: TypedStorage is deprecated. It will be removed in the future\n"
        "model.py:5: UserWarning: The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
        "deprecated and it will throw an error in a future release.\n"
        "model.py:5: UserWarning: a message torchpatch has never seen about a tensor\n", encoding="utf-8")
    run = _check(tmp_path, "--output-format", "json", "--from-warnings", "run.log", "model.py")
    rows = json.loads(run.stdout)
    assert run.returncode == 1
    assert [(r["location"]["row"], r["code"], r.get("runtime")) for r in rows] == [
        (4, "TP224", True), (5, "TP002", True)]  # line 4 found both ways is one finding
    assert rows[1]["count"] == 2 and len(rows[1]["torch_messages"]) == 2
    assert rows[0]["torch_message"].startswith("TypedStorage is deprecated")
    text = _check(tmp_path, "--from-warnings", "run.log")
    assert "runtime: torch warned 1 time in 0 tests: TypedStorage is deprecated" in text.stdout
