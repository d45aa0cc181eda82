"""``--executor ray`` on a local two-CPU Ray cluster (issue 13): thousands of files, the same results as
``-j 1``, every file in the report, and a worker killed mid-run."""

from __future__ import annotations

import json
import os

import pytest
from scan_helpers import checkpoint_tree, python_tree, read_jsonl

from torchpatch.frontends.cli import main
from torchpatch.frontends.executors import ray_executor, scan

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.ray


@pytest.fixture(scope="session")
def ray_cluster():
    """One local cluster for the whole session (starting one costs seconds); the CLI joins it."""
    already = ray.is_initialized()
    if not already:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    if not already:
        ray.shutdown()


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("org")
    python_tree(root, 3000)
    return root


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def one_process(big_tree):
    """The big tree checked by ``-j 1``: (exit code, JSON output, report rows), computed once."""
    previous = os.getcwd()
    os.chdir(big_tree)
    try:
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", ".", "-j", "1", "--no-cache", "--output-format", "json", "--report", "one.jsonl"])
        return code, out.getvalue(), read_jsonl(big_tree / "one.jsonl")
    finally:
        os.chdir(previous)


def test_ray_check_equals_one_process_and_lists_every_file(ray_cluster, big_tree, one_process, capsys, monkeypatch):
    monkeypatch.chdir(big_tree)
    code, out, _ = run(capsys, "check", ".", "--executor", "ray", "--no-cache", "--output-format", "json",
                       "--report", "ray.jsonl")
    code_1, out_1, rows_1 = one_process
    assert code == code_1 == 1 and out == out_1
    rows = read_jsonl(big_tree / "ray.jsonl")
    assert rows == rows_1 and len(rows) == 3001
    assert sum(row["status"] == "failed" for row in rows) == 1


def test_a_worker_killed_mid_run_is_retried_and_the_report_is_complete(ray_cluster, big_tree, one_process, capsys,
                                                                       monkeypatch, tmp_path):
    monkeypatch.chdir(big_tree)
    marker = str(tmp_path / "killed-once")
    victim = os.path.abspath(os.path.join("repo011", "m01105.py"))
    real = scan.check_batch

    def dies_once(shared, tasks):
        import os as worker_os

        if any(str(path) == victim for path, _ in tasks) and not worker_os.path.exists(marker):
            open(marker, "w").close()
            worker_os._exit(1)  # the worker process dies, as on an out-of-memory kill
        return real(shared, tasks)

    monkeypatch.setattr(scan, "CHECK_BATCH", dies_once)
    code, out, _ = run(capsys, "check", ".", "--executor", "ray", "--no-cache", "--output-format", "json",
                       "--report", "killed.jsonl")
    assert os.path.exists(marker)  # the worker did die
    code_1, out_1, rows_1 = one_process
    assert code == code_1 and out == out_1
    assert read_jsonl(big_tree / "killed.jsonl") == rows_1


def test_a_file_that_always_kills_its_worker_is_reported_for_that_file(ray_cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    python_tree(tmp_path, 40)
    victim = os.path.abspath(os.path.join("repo000", "m00007.py"))
    real = scan.check_batch

    def always_dies(shared, tasks):
        import os as worker_os

        if any(str(path) == victim for path, _ in tasks):
            worker_os._exit(1)
        return real(shared, tasks)

    monkeypatch.setattr(scan, "CHECK_BATCH", always_dies)
    monkeypatch.setattr(ray_executor, "DEFAULT_RETRIES", 1)
    code, out, _ = run(capsys, "check", ".", "--executor", "ray", "--no-cache", "--output-format", "json",
                       "--report", "r.jsonl")
    assert code == 2  # an internal error: never a clean run
    rows = {row["path"]: row for row in read_jsonl(tmp_path / "r.jsonl")}
    assert len(rows) == 41
    died = rows[os.path.join("repo000", "m00007.py")]
    assert died["status"] == "failed" and "Ray worker died on this file" in died["reason"]
    assert sum(row["status"] == "failed" for row in rows.values()) == 2  # and the syntax error
    assert any(p["code"] == "TP301" for p in json.loads(out))  # the other files were checked


def test_ray_audit_equals_local_audit(ray_cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checkpoint_tree(tmp_path / "hub", 1000)
    code, out, _ = run(capsys, "audit", "hub", "--executor", "ray", "--output-format", "json", "--report", "ray.jsonl")
    code_1, out_1, _ = run(capsys, "audit", "hub", "--output-format", "json", "--report", "one.jsonl")
    assert code == code_1 == 3 and out == out_1
    rows = read_jsonl(tmp_path / "ray.jsonl")
    assert rows == read_jsonl(tmp_path / "one.jsonl") and len(rows) == 1001
    assert sum(row["verdict"] == "malicious" for row in rows) == 100


def test_ray_audit_of_file_urls(ray_cluster, tmp_path, capsys):
    checkpoint_tree(tmp_path / "hub", 50)
    code, out, _ = run(capsys, "audit", f"file://{tmp_path}/hub", "--executor", "ray", "--output-format", "json")
    reports = json.loads(out)
    assert code == 3 and len(reports) == 50 and all(r["filename"].startswith("file://") for r in reports)
    assert sum(r["verdict"] == "malicious" for r in reports) == 5
