"""--report rows reach the disk as results arrive, and --resume picks up a killed run's partial report
(issue 13): a few hundred generated files, checked in this process (-j 1) so a file's check can look
at the report on disk."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from scan_helpers import python_tree, read_jsonl

from torchpatch.engine import parallel, report
from torchpatch.frontends.cli import main

COUNT = 300


@pytest.fixture
def big_project(tmp_path, monkeypatch):
    # Parquet row groups of 100 rows instead of 1,000: the same shapes of run on a tenth of the files.
    monkeypatch.setattr(report, "PARQUET_ROW_GROUP", 100)
    monkeypatch.chdir(tmp_path)
    python_tree(tmp_path / "src", COUNT)  # COUNT files and a syntax error (src/repo000/broken.py, listed first)
    return tmp_path


def _on_file(monkeypatch, number: int, action) -> None:
    """``action()`` just before the ``number``-th file (1-based, in input order) is checked."""
    real = parallel._Job.__call__
    seen = []

    def call(self, task):
        seen.append(task[0])
        if len(seen) == number:
            action()
        return real(self, task)

    monkeypatch.setattr(parallel._Job, "__call__", call)


def test_rows_are_on_disk_before_the_run_ends_and_the_old_report_stays_until_the_end(big_project, capsys, monkeypatch):
    (big_project / "r.jsonl").write_text("the old report\n")
    partial = big_project / "r.jsonl.partial"
    looked = []
    _on_file(monkeypatch, 200, lambda: looked.append(
        (read_jsonl(partial), (big_project / "r.jsonl").read_text())))
    code = main(["check", "src", "--report", "r.jsonl", "-q", "--no-cache", "-j", "1"])
    capsys.readouterr()
    assert code == 1
    (rows_then, old_then), = looked
    assert len(rows_then) == 199 and old_then == "the old report\n"
    rows = read_jsonl(big_project / "r.jsonl")
    assert len(rows) == COUNT + 1 and rows[:199] == rows_then and not partial.exists()


def test_resume_from_the_partial_report_of_a_killed_run(big_project, capsys, monkeypatch):
    script = textwrap.dedent("""
        import os, sys
        from torchpatch.engine import parallel
        from torchpatch.frontends.cli import main
        real, seen = parallel._Job.__call__, []
        def call(self, task):
            seen.append(task)
            if len(seen) == 200:
                os._exit(137)  # killed: no cleanup, no rename
            return real(self, task)
        parallel._Job.__call__ = call
        sys.exit(main(["check", "src", "--report", "r.jsonl", "-q", "--no-cache", "-j", "1"]))
    """)
    killed = subprocess.run([sys.executable, "-c", script], cwd=big_project, capture_output=True, text=True, check=False)
    assert killed.returncode == 137, killed.stderr
    partial = big_project / "r.jsonl.partial"
    assert not (big_project / "r.jsonl").exists()
    rows_before = read_jsonl(partial)
    assert len(rows_before) == 199
    with open(partial, "a", encoding="utf-8") as stream:
        stream.write('{"path": "src/repo019/m01999.py", "sta')  # a row cut off mid-write by the kill
    checked = []
    real = parallel._Job.__call__
    monkeypatch.setattr(parallel._Job, "__call__", lambda self, task: checked.append(task[0]) or real(self, task))
    code = main(["check", "src", "--resume", "r.jsonl.partial", "--report", "r.jsonl", "--no-cache", "-j", "1"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "198 file(s) kept from r.jsonl.partial" in err  # every row but the syntax error's (failed: tried again)
    assert len(checked) == COUNT + 1 - 198
    resumed = read_jsonl(big_project / "r.jsonl")
    assert not partial.exists()
    main(["check", "src", "--report", "fresh.jsonl", "-q", "--no-cache", "-j", "1"])
    capsys.readouterr()
    assert resumed == read_jsonl(big_project / "fresh.jsonl") and resumed[:199] == rows_before


def test_a_cut_off_line_is_an_error_in_a_finished_report(tmp_path):
    (tmp_path / "r.jsonl").write_text('{"path": "a.py", "sta')
    with pytest.raises(report.ReportError, match="not a torchpatch report"):
        report.read_rows(tmp_path / "r.jsonl")


def test_an_interrupted_parquet_run_leaves_a_readable_partial_that_resume_uses(big_project, capsys, monkeypatch):
    parquet = pytest.importorskip("pyarrow.parquet")

    def interrupt():
        raise KeyboardInterrupt

    _on_file(monkeypatch, 250, interrupt)
    code = main(["check", "src", "--report", "r.parquet", "-q", "--no-cache", "-j", "1"])
    assert code != 0 and "interrupted" in capsys.readouterr().err
    assert not (big_project / "r.parquet").exists()
    partial = big_project / "r.parquet.partial"
    table = parquet.ParquetFile(partial)
    assert table.metadata.num_rows == 249 and table.metadata.num_row_groups == 3  # 100, 100, 49 on close
    monkeypatch.undo()
    monkeypatch.setattr(report, "PARQUET_ROW_GROUP", 100)
    monkeypatch.chdir(big_project)
    code = main(["check", "src", "--resume", "r.parquet.partial", "--report", "r.parquet", "-q", "--no-cache", "-j", "1"])
    capsys.readouterr()
    assert code == 1 and not partial.exists()
    main(["check", "src", "--report", "fresh.parquet", "-q", "--no-cache", "-j", "1"])
    capsys.readouterr()
    assert parquet.read_table(big_project / "r.parquet").to_pylist() == \
        parquet.read_table(big_project / "fresh.parquet").to_pylist()
    assert parquet.ParquetFile(big_project / "fresh.parquet").metadata.num_row_groups == 4
