"""The result cache and -j (issue 12 §4): same results as a cold single-process run, and a warm run parses nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from torchpatch.engine import parallel
from torchpatch.frontends.cli import main

LOAD = 'import pickle\nimport torch\nstate = torch.load("m.pt", pickle_module=pickle)\n'
EXPORT = "import torch\nep = torch.export.export_for_training(m, a, strict=False)\n"
SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def notebook(source: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": source}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A project of 29 files: findings, clean files, a notebook, a syntax error, a pin, a sub-configuration."""
    monkeypatch.chdir(tmp_path)
    for index in range(8):
        write(tmp_path / "pkg" / f"load_{index}.py", LOAD + f"value = {index}\n")
        write(tmp_path / "pkg" / f"clean_{index}.py", f"import torch\nx = torch.zeros({index})\n")
        write(tmp_path / "pkg" / "models" / f"export_{index}.py", EXPORT + SCALER.replace("import torch\n", ""))
    write(tmp_path / "pkg" / "broken.py", "import torch\ndef f(:\n")
    write(tmp_path / "notebooks" / "train.ipynb", notebook(["import torch\n", 'm = torch.load("x.pt", pickle_module=pickle)\n']))
    write(tmp_path / "requirements.txt", "torch>=2.6\n")
    write(tmp_path / "legacy" / "torchpatch.toml", 'ignore = ["TP301"]\n')
    write(tmp_path / "legacy" / "old.py", LOAD + EXPORT.replace("import torch\n", ""))
    write(tmp_path / "legacy" / "older.py", SCALER)
    return tmp_path


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code = main(["check", "--output-format", "json", *args, "."])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_jobs_give_the_same_results_as_one_process(tree, capsys, monkeypatch, method):
    if method == "fork" and not sys.platform.startswith("linux"):
        pytest.skip("fork is used on Linux only")

    monkeypatch.setattr(parallel, "start_method", lambda: method)
    methods = []
    import multiprocessing

    from torchpatch.engine import forked

    real_get_context, real_outcomes = multiprocessing.get_context, forked.outcomes

    def spy(method):
        methods.append(method)
        return real_get_context(method)

    def spy_forked(tasks, run, helpers, chunksize):
        methods.append(f"main and {helpers} forked")
        return real_outcomes(tasks, run, helpers, chunksize)

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    monkeypatch.setattr(forked, "outcomes", spy_forked)
    one = run_json(capsys, "--no-cache", "-j", "1")
    assert methods == []
    two = run_json(capsys, "--no-cache", "-j", "2")
    # On Linux the main process checks files beside one forked helper; elsewhere a pool of two is spawned.
    assert methods == (["main and 1 forked"] if method == "fork" else ["spawn"])
    assert one == two
    code, findings = one
    assert code == 1 and len(findings) == 28
    assert [f["filename"] for f in findings] == sorted(f["filename"] for f in findings)  # path order
    concise_one = main(["check", "--no-cache", "-j", "1", "--output-format", "concise", "."]), capsys.readouterr().out
    concise_two = main(["check", "--no-cache", "-j", "2", "--output-format", "concise", "."]), capsys.readouterr().out
    assert concise_one == concise_two


def test_fix_with_jobs_writes_the_same_files(tree, capsys, tmp_path_factory):
    import shutil

    copy = tmp_path_factory.mktemp("copy") / "tree"
    shutil.copytree(tree, copy)
    assert main(["check", "--no-cache", "--fix", "-j", "1", "."]) == 1
    main(["check", "--no-cache", "--fix", "-j", "2", str(copy)])
    capsys.readouterr()
    for path in sorted(tree.rglob("*.py")):
        assert path.read_text() == (copy / path.relative_to(tree)).read_text(), path


def test_warm_cache_checks_nothing_again(tree, capsys, monkeypatch):
    cold = run_json(capsys, "-j", "1")
    assert (tree / ".torchpatch_cache").is_dir() or Path(__import__("os").environ["TORCHPATCH_CACHE_DIR"]).is_dir()

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached file was checked again")

    monkeypatch.setattr(parallel, "check_file", must_not_run)
    assert run_json(capsys, "-j", "1") == cold
    full_warm = main(["check", "-j", "1", "."]), capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.chdir(tree)
    full_cold = main(["check", "-j", "1", "--no-cache", "."]), capsys.readouterr().out
    assert full_warm == full_cold


def test_cache_misses_exactly_when_the_file_or_settings_change(tree, capsys, monkeypatch):
    run_json(capsys, "-j", "1")
    checked: list[str] = []
    real = parallel.check_file

    def counting(path, *args, **kwargs):
        checked.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(parallel, "check_file", counting)
    write(tree / "pkg" / "clean_3.py", LOAD)
    code, findings = run_json(capsys, "-j", "1")
    assert checked == ["clean_3.py"]
    assert any(f["filename"].endswith("clean_3.py") and f["code"] == "TP301" for f in findings)
    checked.clear()
    run_json(capsys, "-j", "1", "--target-torch", "2.8")  # other settings: other results
    assert len(checked) == 29  # every file
    checked.clear()
    run_json(capsys, "-j", "1", "--fix")  # fixing is never answered from a check-mode entry
    assert "export_0.py" in checked


def test_corrupt_cache_is_a_miss(tree, capsys, monkeypatch):
    folder = tree / "cache"
    cold = run_json(capsys, "-j", "1", "--cache-dir", str(folder))
    (cache_file,) = folder.rglob("check.json")
    data = json.loads(cache_file.read_text())
    for key in data["entries"]:
        data["entries"][key] = ["not", "an", "entry"]
    cache_file.write_text(json.dumps(data))
    assert run_json(capsys, "-j", "1", "--cache-dir", str(folder)) == cold
    cache_file.write_text("{not json")
    assert run_json(capsys, "-j", "1", "--cache-dir", str(folder)) == cold


def test_cache_folder_layout_no_cache_and_clean(tree, capsys, monkeypatch):
    monkeypatch.delenv("TORCHPATCH_CACHE_DIR")
    run_json(capsys, "--no-cache")
    assert not (tree / ".torchpatch_cache").exists()
    run_json(capsys)
    folder = tree / ".torchpatch_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert list(folder.rglob("check.json"))
    assert not [f for f in run_json(capsys)[1] if ".torchpatch_cache" in f["filename"]]
    assert main(["clean"]) == 0
    assert not folder.exists()
    write(tree / "not_a_cache" / "keep.txt", "mine")
    assert main(["clean", "--cache-dir", "not_a_cache"]) == 2
    assert (tree / "not_a_cache" / "keep.txt").exists()


class _Terminal:
    """A stderr that says it is a terminal and records what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("output_format, shown", [("full", True), ("concise", True), ("json", False),
                                                  ("github", False), ("sarif", False)])
def test_progress_bar_only_for_human_formats_on_a_terminal(tree, capsys, monkeypatch, output_format, shown):
    from torchpatch.frontends import check

    monkeypatch.setattr(check, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.delenv("CI", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(check.sys, "stderr", terminal)
    main(["check", "--no-cache", "-j", "1", "--output-format", output_format, "-o", "report.txt", "."])
    assert ("29/29 files" in terminal.text) == shown
    assert "[####" not in (tree / "report.txt").read_text()  # never in the report
    terminal.text = ""
    main(["check", "--no-cache", "-j", "1", "--output-format", output_format, "."])
    assert "files" not in terminal.text  # stdout is piped (captured): no bar
    assert "[####" not in capsys.readouterr().out


def test_default_jobs_start_no_worker_for_work_too_small_to_pay(tree, capsys, monkeypatch):
    """No ``-j``: a small tree is checked in the main process (a pool would cost more than it saves)."""
    import multiprocessing

    from torchpatch.engine import forked

    started = []
    monkeypatch.setattr(multiprocessing, "get_context", lambda method: started.append(method))
    monkeypatch.setattr(forked, "outcomes", lambda *args: started.append("fork"))
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    code, findings = run_json(capsys, "--no-cache")
    assert started == [] and code == 1 and len(findings) == 28


def test_jobs_that_pay_grow_with_the_bytes_to_check(tmp_path):
    small = []
    for number in range(40):
        path = tmp_path / f"m{number}.py"
        path.write_text("import torch\n" * 100)
        small.append(path)
    assert parallel.jobs_that_pay(small, 2, "fork") == 1  # 40 files of 1.3 kB: not worth a worker
    big = tmp_path / "big"
    big.mkdir()
    many = []
    for number in range(40):
        path = big / f"m{number}.py"
        path.write_bytes(b"x = 1\n" * (parallel.MIN_BYTES_PER_FORKED_WORKER // 6 // 20 + 1))
        many.append(path)
    assert parallel.jobs_that_pay(many, 2, "fork") == 2  # two workers' worth
    assert parallel.jobs_that_pay(many, 1, "fork") == 1
    assert parallel.jobs_that_pay(many, 2, "spawn") == 1  # a spawned worker imports torchpatch again
    assert parallel.jobs_that_pay(many[:10], 2, "fork") == 1  # fewer than MIN_FILES_PER_WORKER each


def test_default_jobs_leave_out_the_cores_other_jobs_keep_busy(monkeypatch):
    """No ``-j`` on a machine whose cores are busy with other jobs: no worker that would get no core (issue 27)."""
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    for load, idle in ((0.0, 2), (1.2, 2), (1.6, 1), (2.4, 1), (9.0, 1)):
        monkeypatch.setattr(parallel.os, "getloadavg", lambda load=load: (load, load, load))
        assert parallel.idle_cores() == idle, load
    monkeypatch.setattr(parallel, "available_cores", lambda: 16)
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (4.0, 4.0, 4.0))
    assert parallel.idle_cores() == 13



def test_a_run_with_a_fresh_cache_reads_each_file_once(tree, capsys, monkeypatch):
    """An empty cache answers nothing: no file is read (and hashed) for a lookup before it is read to be checked."""
    read: list[str] = []
    real_read = parallel.read_bytes

    def reading(path):
        read.append(str(path))
        return real_read(path)

    monkeypatch.setattr(parallel, "read_bytes", reading)
    code, findings = run_json(capsys, "-j", "1")
    assert findings and read and len(read) == len(set(read))
    read.clear()
    assert run_json(capsys, "-j", "1") == (code, findings)  # the cache is filled: a rerun reads no clean file twice
    assert len(read) == len(set(read))


def test_a_warm_rerun_reads_no_file_whose_stat_had_settled(tree, capsys, monkeypatch):
    """Keyed by its stat (size, mtime, ctime, inode), a clean file that has not changed is not read again; a file
    with findings is (its text is restored), and an edit changes the stat, so it is checked again."""
    import os

    from torchpatch.engine import cache as result_cache

    monkeypatch.setattr(result_cache, "STAT_SETTLED_NS", 0)
    cold = run_json(capsys, "-j", "1")
    read: list[str] = []
    real_read, real_check = parallel.read_bytes, parallel.check_file

    def reading(path):
        read.append(path.name)
        return real_read(path)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached file was checked again")

    monkeypatch.setattr(parallel, "read_bytes", reading)
    monkeypatch.setattr(parallel, "check_file", must_not_run)
    assert run_json(capsys, "-j", "1") == cold
    assert not [name for name in read if name.startswith("clean_")] and "load_0.py" in read
    monkeypatch.setattr(parallel, "check_file", real_check)
    path = tree / "pkg" / "clean_4.py"
    before = os.stat(path)
    write(path, LOAD)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the old mtime back: ctime still moves
    code, findings = run_json(capsys, "-j", "1")
    assert any(f["filename"].endswith("clean_4.py") and f["code"] == "TP301" for f in findings)


def test_a_file_written_just_now_is_keyed_by_its_bytes_only(tree):
    import os

    from torchpatch.engine import cache as result_cache

    status = os.stat(tree / "pkg" / "clean_0.py")
    written = max(status.st_mtime_ns, status.st_ctime_ns)
    assert not result_cache.settled(status, written + result_cache.STAT_SETTLED_NS // 2)
    assert result_cache.settled(status, written + 2 * result_cache.STAT_SETTLED_NS)
