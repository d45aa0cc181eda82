"""Checking many files: one pure job per file (bytes + settings → FileResult), the cache, and a process pool.

The pool uses the ``spawn`` start method on every platform (no inherited state, the same behaviour on
Linux, macOS and Windows); results come back in the order of the file list, so ``-j N`` prints exactly
what ``-j 1`` prints.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from torchpatch.engine import cache as result_cache
from torchpatch.engine.linter import FileResult, check_file
from torchpatch.engine.settings import Settings

START_METHOD = "spawn"
#: Fewer files than this per worker is not worth a worker's start-up (about 0.3 s to import torchpatch).
MIN_FILES_PER_WORKER = 8
#: A cyclic garbage collection every this many files (see ``_Job``).
_GC_EVERY = 100


@dataclass(frozen=True)
class Mode:
    fix: bool = False
    unsafe_fixes: bool = False
    add_todos: bool = False

    def cache_name(self) -> str:
        if not self.fix:
            return "check"
        return "fix" + ("-unsafe" if self.unsafe_fixes else "") + ("-todos" if self.add_todos else "")


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


class _Job:
    """The per-file work, the same in the main process (``-j 1``) and in each worker.

    Cyclic GC is off while files are checked, with one collection every ``_GC_EVERY`` files: an AST is
    freed by reference counting alone, but the collector, triggered by the allocations of parsing,
    walks every live AST node again and again (a fifth of the run time on large trees).
    """

    def __init__(self, settings: Sequence[Settings], mode: Mode, cached: dict[str, list] | None) -> None:
        self.settings = settings
        self.mode = mode
        self.cached = cached
        self.count = 0

    def __call__(self, task: tuple[Path, int]) -> tuple[FileResult, str | None, list | None, bool]:
        path, settings_index = task
        settings = self.settings[settings_index]
        try:
            data = path.read_bytes()
        except OSError as error:
            return FileResult(path=path, error=f"cannot read: {error.strerror or error}"), None, None, False
        key = entry = None
        if self.cached is not None:
            key = result_cache.file_key(path, settings, data)
            stored = self.cached.get(key)
            if stored is not None:
                try:
                    result = result_cache.from_entry(stored, path)
                except (ValueError, TypeError, IndexError):
                    result = None
                if result is not None:
                    if result.findings:
                        _restore_text(result, data)
                    return result, key, None, True
        result = check_file(path, settings, fix=self.mode.fix, unsafe_fixes=self.mode.unsafe_fixes,
                            add_todos=self.mode.add_todos, data=data)
        if not result.findings and not result.fixed_count and not result.todo_count:
            result.source = result.original_text = result.fixed_text = None  # keep memory flat on big trees
        if key is not None and result_cache.cacheable(result):
            entry = result_cache.to_entry(result)
        self.count += 1
        if self.count % _GC_EVERY == 0:
            gc.collect()
        return result, key, entry, False


def _restore_text(result: FileResult, data: bytes) -> None:
    """A cached result with findings gets its text back (JSON edit positions, --diff, the full format)."""
    from torchpatch.engine.dependencies import is_dependency_file
    from torchpatch.engine.source import Source, read_source

    if is_dependency_file(result.path):
        text = data.decode("utf-8-sig")
        source = Source(path=result.path, text=text)
    else:
        source = read_source(result.path, data)
    result.source, result.original_text, result.fixed_text = source, source.text, source.text


_worker_job: _Job | None = None


def _init_worker(settings: Sequence[Settings], mode: Mode, cached: dict[str, list] | None) -> None:
    global _worker_job
    gc.freeze()
    gc.disable()
    _worker_job = _Job(settings, mode, cached)


def _run_in_worker(task: tuple[Path, int]):
    assert _worker_job is not None
    return _worker_job(task)


def check_files(files: Sequence[Path], settings_of: Callable[[Path], Settings], mode: Mode, jobs: int,
                cache: "result_cache.ResultCache | None" = None,
                progress: Callable[[int], None] | None = None) -> list[FileResult]:
    """Check ``files`` (in this order) with ``jobs`` processes; results in the same order."""
    settings_list: list[Settings] = []
    index_of: dict[int, int] = {}
    tasks = []
    for path in files:
        settings = settings_of(path)
        if id(settings) not in index_of:
            index_of[id(settings)] = len(settings_list)
            settings_list.append(settings)
        tasks.append((path, index_of[id(settings)]))
    cached = cache.entries if cache is not None else None
    workers = min(jobs, len(tasks) // MIN_FILES_PER_WORKER)
    results: list[FileResult] = []
    for done, (result, key, entry, hit) in enumerate(_results(tasks, settings_list, mode, cached, workers), 1):
        if cache is not None and key is not None:
            cache.record(key, entry, hit)
        results.append(result)
        if progress is not None:
            progress(done)
    return results


def _results(tasks, settings_list, mode: Mode, cached, workers: int) -> Iterator:
    if workers < 2:
        was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()  # what the imports created is never garbage: keep it out of every later collection
        gc.disable()
        try:
            job = _Job(settings_list, mode, cached)
            for task in tasks:
                yield job(task)
        finally:
            gc.unfreeze()
            if was_enabled:
                gc.enable()
        return
    context = multiprocessing.get_context(START_METHOD)
    chunksize = max(1, min(8, len(tasks) // (workers * 32)))
    with context.Pool(workers, initializer=_init_worker, initargs=(settings_list, mode, cached)) as pool:
        yield from pool.imap(_run_in_worker, tasks, chunksize)
