"""Large scans without Ray (issue 13): --report, --files-from, --resume, and fsspec URLs for audit."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest
from scan_helpers import CLEAN, LOAD, MALICIOUS, SAFE, checkpoint_tree, python_tree, read_jsonl, torch_zip

from torchpatch.frontends.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    python_tree(tmp_path / "src", 60)
    return tmp_path


def test_report_lists_every_file_with_the_findings_of_the_json_output(project, capsys):
    (project / "list.txt").write_text("src\n# a comment\n\nmissing.py\n")
    code, out, err = run(capsys, "check", "--files-from", "list.txt", "--report", "r.jsonl",
                         "--output-format", "json", "--no-cache")
    assert code == 1
    rows = read_jsonl(project / "r.jsonl")
    assert len(rows) == 62  # 60 files, the syntax error, the listed file that does not exist
    by_path = {row["path"]: row for row in rows}
    assert by_path["missing.py"]["status"] == "failed" and "No such file" in by_path["missing.py"]["reason"]
    broken = by_path[os.path.join("src", "repo000", "broken.py")]
    assert broken["status"] == "failed" and broken["reason"].startswith("syntax error")
    assert {row["status"] for row in rows} == {"checked", "failed"}
    printed = json.loads(out)
    reported = sorted((row["path"], f["code"], f["row"]) for row in rows for f in row["findings"])
    assert reported == sorted((os.path.relpath(p["filename"]), p["code"], p["location"]["row"])
                              for p in printed if p["code"] != "TP001")  # TP001: a file not checked (a failed row)
    assert sum(1 for row in rows if any(f["code"] == "TP301" for f in row["findings"])) == 20


def test_files_from_stdin(project, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("src/repo000/m00000.py\nsrc/repo000/m00001.py\n"))
    code, _, _ = run(capsys, "check", "--files-from", "-", "--report", "r.jsonl", "-q")
    assert code == 1
    assert [row["path"] for row in read_jsonl(project / "r.jsonl")] == ["src/repo000/m00000.py", "src/repo000/m00001.py"]


def test_parquet_report_round_trips(project, capsys):
    parquet = pytest.importorskip("pyarrow.parquet")
    run(capsys, "check", "src", "--report", "r.jsonl", "-q")
    run(capsys, "check", "src", "--report", "r.parquet", "-q")
    assert parquet.read_table(project / "r.parquet").to_pylist() == read_jsonl(project / "r.jsonl")


@pytest.mark.parametrize("args, message", [
    (["--report", "r.csv"], "must end in .jsonl or .parquet"),
    (["--resume", "absent.jsonl"], "--resume absent.jsonl"),
    (["--files-from", "absent.txt"], "--files-from absent.txt"),
    (["--ray-address", "ray://h:10001"], "--ray-address needs --executor ray"),
])
def test_bad_scan_options_are_one_line_usage_errors(project, capsys, args, message):
    code, _, err = run(capsys, "check", "src", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_missing_pyarrow_and_ray_are_one_line_errors(project, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "ray", None)
    code, _, err = run(capsys, "check", "src", "--report", "r.parquet")
    assert code == 2 and "needs pyarrow" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "check", "src", "--executor", "ray")
    assert code == 2 and "pip install 'torchpatch[ray] @ git+https://github.com/torchpatch/torchpatch'" in err and len(err.strip().splitlines()) == 1
    assert not (project / "r.parquet").exists()


def test_a_malformed_resume_report_is_an_error(project, capsys):
    (project / "old.jsonl").write_text('{"path": "x"}\n')
    code, _, err = run(capsys, "check", "src", "--resume", "old.jsonl")
    assert code == 2 and "not a torchpatch report" in err


def test_resume_keeps_unchanged_files_and_rechecks_changed_ones(project, capsys, monkeypatch):
    run(capsys, "check", "src", "--report", "first.jsonl", "-q", "--no-cache")
    first = read_jsonl(project / "first.jsonl")
    changed = project / "src" / "repo000" / "m00001.py"  # clean: gets a finding
    changed.write_text(LOAD + "# grew\n")
    from torchpatch.engine import parallel

    checked = []
    real = parallel._Job.__call__
    monkeypatch.setattr(parallel._Job, "__call__", lambda self, task: checked.append(task[0]) or real(self, task))
    code, _, err = run(capsys, "check", "src", "--resume", "first.jsonl", "--report", "second.jsonl",
                       "--no-cache", "-j", "1")
    # The changed file, and the syntax error (failed rows are tried again).
    assert sorted(map(str, checked)) == [os.path.join("src", "repo000", "broken.py"), str(changed.relative_to(project))]
    assert "59 file(s) kept" in err and code == 1
    second = read_jsonl(project / "second.jsonl")
    assert [row["path"] for row in second] == [row["path"] for row in first]
    assert [r for r in second if r["path"] != str(changed.relative_to(project))] == \
        [r for r in first if r["path"] != str(changed.relative_to(project))]
    assert [f["code"] for r in second if r["path"] == str(changed.relative_to(project)) for f in r["findings"]] == ["TP301"]
    checked.clear()
    run(capsys, "check", "src", "--resume", "second.jsonl", "-q", "--no-cache", "-j", "1", "--target-torch", "2.10")
    assert len(checked) == 61  # other settings: nothing is reused


def test_resume_of_a_clean_tree_keeps_the_exit_code_of_its_findings(project, capsys):
    run(capsys, "check", "src", "--report", "first.jsonl", "-q")
    (project / "src" / "repo000" / "broken.py").write_text(CLEAN)
    code, _, _ = run(capsys, "check", "src", "--resume", "first.jsonl", "-q")
    assert code == 1  # the kept rows hold TP301 findings


def test_audit_report_covers_checkpoints_skipped_files_and_missing_list_entries(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checkpoint_tree(tmp_path / "hub", 30)
    (tmp_path / "list.txt").write_text("hub\ngone.pt\n")
    code, out, _ = run(capsys, "audit", "--files-from", "list.txt", "--report", "a.jsonl", "--output-format", "json")
    assert code == 3
    rows = read_jsonl(tmp_path / "a.jsonl")
    assert len(rows) == 32
    by_path = {row["path"]: row for row in rows}
    assert by_path[os.path.join("hub", "model000", "README.md")]["status"] == "skipped"
    assert by_path["gone.pt"]["status"] == "failed" and "No such file" in by_path["gone.pt"]["reason"]
    verdicts = [row["verdict"] for row in rows if row["status"] == "checked"]
    assert verdicts.count("malicious") == 3 and verdicts.count("safe") == 27
    assert {r["filename"]: r["verdict"] for r in json.loads(out)} == \
        {row["path"]: row["verdict"] for row in rows if row["status"] != "skipped"}
    assert all(row["bytes_read"] > 0 for row in rows if row["status"] == "checked")


def test_audit_resume(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = checkpoint_tree(tmp_path / "hub", 20)
    run(capsys, "audit", "hub", "--report", "a.jsonl")
    paths[0].write_bytes(MALICIOUS + b"")  # a new size: audited again
    code, out, err = run(capsys, "audit", "hub", "--resume", "a.jsonl", "--report", "b.jsonl", "--output-format", "json")
    assert "19 file(s) kept" in err and code == 3
    assert [r["filename"] for r in json.loads(out)] == [str(paths[0].relative_to(tmp_path))]
    rows = read_jsonl(tmp_path / "b.jsonl")
    assert len(rows) == 21 and {r["path"]: r["verdict"] for r in rows}[str(paths[0].relative_to(tmp_path))] == "malicious"
    code, _, _ = run(capsys, "audit", "hub", "--resume", "b.jsonl", "--torch-version", "2.8")
    assert code == 3  # another torch release: everything audited again


def test_fsspec_memory_and_local_urls_give_the_local_verdicts_reading_kilobytes(tmp_path, capsys):
    fsspec = pytest.importorskip("fsspec")
    big = torch_zip(__import__("pickle").dumps({"step": 1}, protocol=2), storage=os.urandom(8 << 20))
    memory = fsspec.filesystem("memory")
    memory.pipe({"/hub/org/big.pt": big, "/hub/org/bad.pt": MALICIOUS, "/hub/org/sub/ok.pt": SAFE,
                 "/hub/org/notes.txt": b"hello"})
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "big.pt").write_bytes(big)
    try:
        code, out, _ = run(capsys, "audit", "memory://hub/org", "--report", str(tmp_path / "m.jsonl"),
                           "--output-format", "json")
        assert code == 3
        rows = read_jsonl(tmp_path / "m.jsonl")
        assert [(r["path"], r["status"], r["verdict"]) for r in rows] == [
            ("memory:///hub/org/bad.pt", "checked", "malicious"), ("memory:///hub/org/big.pt", "checked", "safe"),
            ("memory:///hub/org/notes.txt", "skipped", None), ("memory:///hub/org/sub/ok.pt", "checked", "safe")]
        big_row = rows[1]
        assert big_row["size"] == len(big) and big_row["bytes_read"] < 8 * 1024
        # 8 MiB file: the zip's last 42 bytes (end-of-directory record, zip64 locator), its central
        # directory, and the local headers and bytes of the records other than storages
        code, out_url, _ = run(capsys, "audit", f"file://{tmp_path}/org/big.pt", "--output-format", "json")
        code_local, out_local, _ = run(capsys, "audit", str(tmp_path / "org" / "big.pt"), "--output-format", "json")
        url_report, local_report = json.loads(out_url)[0], json.loads(out_local)[0]
        assert url_report.pop("filename").startswith("file://") and local_report.pop("filename")
        # Through fsspec the storage records' local headers are not read: their alignment note (TPA205)
        # is the local path's only; everything else is the same.
        storage_header_codes = {"TPA205", "TPA207", "TPA208"}
        local_findings = local_report.pop("findings")
        assert [f["code"] for f in local_findings] == ["TPA205"]
        assert url_report.pop("findings") == [f for f in local_findings if not (
            f["code"] in storage_header_codes and f["member"].startswith("archive/data/"))]
        assert url_report == local_report and code == code_local == 0
        code, out, _ = run(capsys, "audit", "memory://hub/org/bad.pt", "--output-format", "sarif")
        uris = {location["physicalLocation"]["artifactLocation"]["uri"]
                for result in json.loads(out)["runs"][0]["results"] for location in result["locations"]}
        assert code == 3 and uris == {"memory://hub/org/bad.pt"}
        code, _, err = run(capsys, "audit", "memory://hub/absent")
        assert code == 2 and "no such file or folder: memory://hub/absent" in err
    finally:
        memory.rm("/hub", recursive=True)


def test_check_refuses_urls(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "list.txt").write_text("s3://bucket/repo\n")
    code, _, err = run(capsys, "check", "--files-from", "list.txt")
    assert code == 2 and "URLs are for `torchpatch audit`" in err


def test_scan_options_with_stdin_are_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(LOAD))
    code, _, err = run(capsys, "check", "-", "--report", "r.jsonl")
    assert code == 2 and "not stdin" in err and not (tmp_path / "r.jsonl").exists()


class _FakeRay:
    """Just enough of ``ray`` to see how the CLI connects (a real cluster is in test_ray_scans.py)."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, object]] = []
        self.fail = fail

    def is_initialized(self) -> bool:
        return False

    def init(self, address=None, **options) -> None:
        self.calls.append(("init", address))
        if self.fail:
            raise ConnectionError(f"could not find any running Ray instance at {address}")

    def shutdown(self) -> None:
        self.calls.append(("shutdown", None))


@pytest.mark.parametrize("argv, environment, address", [
    ([], None, None),  # ray.init() starts a local cluster
    (["--ray-address", "ray://head:10001"], "ignored:6379", "ray://head:10001"),
    ([], "head:6379", "head:6379"),
])
def test_the_ray_address_comes_from_the_option_then_the_environment(tmp_path, capsys, monkeypatch, argv, environment,
                                                                   address):
    monkeypatch.chdir(tmp_path)
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    if environment:
        monkeypatch.setenv("RAY_ADDRESS", environment)
    else:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "empty").mkdir()
    run(capsys, "check", "empty", "--executor", "ray", *argv)
    assert fake.calls == [("init", address), ("shutdown", None)]


def test_a_cluster_that_cannot_be_joined_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(fail=True))
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "m.py").write_text(LOAD)
    code, out, err = run(capsys, "check", "repo", "--executor", "ray", "--ray-address", "nowhere:1")
    assert code == 2 and "cannot join the Ray cluster" in err and len(err.strip().splitlines()) == 1
    assert sys.stdout is not sys.stderr  # stdout given back


def _zip_with_comment(data: bytes, comment: bytes) -> bytes:
    import zipfile

    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.comment = comment
    return buffer.getvalue()


@pytest.mark.parametrize("comment", [b"", b"a comment", b"PK\x05\x06" + b"\0" * 18])
def test_byte_ranges_read_the_last_42_bytes_first_and_the_64_kib_tail_only_for_a_comment(tmp_path, comment):
    pytest.importorskip("fsspec")
    from torchpatch.frontends.executors import scan
    from torchpatch.versions import Version

    path = tmp_path / "m.pt"
    path.write_bytes(_zip_with_comment(torch_zip(__import__("pickle").dumps({"step": 1}, protocol=2),
                                                 storage=os.urandom(1 << 20)), comment))
    url_report, fetched, requests = scan.audit_one(Version(2, 13), f"file://{path}", None)
    local_report, _, _ = scan.audit_one(Version(2, 13), str(path), None)
    # A comment that ends like an end-of-directory record is taken for one by both paths (as before).
    expected = "unreadable" if comment.startswith(b"PK") else "safe"
    assert url_report.verdict == local_report.verdict == expected and url_report.reason == local_report.reason
    if comment == b"a comment":
        assert fetched > 64 * 1024  # the comment hides the record: the 64 KiB tail is read
    else:
        assert fetched < 4 * 1024 and requests <= 6


def test_only_the_remote_path_skips_the_local_headers_of_storage_records(tmp_path):
    pytest.importorskip("fsspec")
    from torchpatch.frontends.executors import scan
    from torchpatch.versions import Version

    data = bytearray(torch_zip(__import__("pickle").dumps({"step": 1}, protocol=2)))
    at = data.index(b"PK\x03\x04archive/data/0"[:4], data.index(b"archive/data/0") - 30)
    data[at + 30:at + 30 + len("archive/data/0")] = b"archive/data/X"  # the local name differs from the central one
    path = tmp_path / "m.pt"
    path.write_bytes(bytes(data))
    local_report, _, _ = scan.audit_one(Version(2, 13), str(path), None)
    url_report, _, _ = scan.audit_one(Version(2, 13), f"file://{path}", None)
    assert "TPA208" in {f.code for f in local_report.findings}
    assert "TPA208" not in {f.code for f in url_report.findings}
    assert url_report.verdict == local_report.verdict
