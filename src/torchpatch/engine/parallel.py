"""Checking many files: one pure job per file (bytes + settings → FileResult), the cache, and a process pool.

On Linux the main process checks files too, beside forked helpers (``engine.forked``): it has imported
torchpatch and resolved the settings already, so a helper starts in milliseconds and imports nothing again.
Elsewhere, and when the process runs threads (an editor's language server), a pool of ``spawn``ed workers
checks them. Results come back in the order of the file list, so
``-j N`` prints exactly what ``-j 1`` prints. ``jobs=None`` (no ``-j``) starts workers only when the work
pays for them (``jobs_that_pay``), on the cores other jobs leave idle (``idle_cores``).
"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence

from torchpatch._record import FrozenRecord
from torchpatch.engine.results import FileResult
from torchpatch.engine.settings import Settings
from torchpatch.engine.source import read_bytes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from torchpatch.engine import cache as result_cache

#: Fewer files than this per worker is not worth a worker.
MIN_FILES_PER_WORKER = 8
#: With no ``-j``: a worker for every this many bytes of source to check, at most one per idle core. About
#: 0.5 CPU-s of checking on torch-heavy code: a forked helper starts in milliseconds, but the processes together
#: cost more CPU than one (the helper's results pickled and read back, the lazily built rule data built again,
#: pages copied on write): on detectron2 (3.3 MB) ``-j 2`` is 1.6x faster for 5-8% more CPU, which a default
#: run, judged by the CPU it takes from the machine, does not spend (issue 27); a spawned worker imports
#: torchpatch again (about 0.3 s), so it needs more.
MIN_BYTES_PER_FORKED_WORKER = 2 * 1024 * 1024
MIN_BYTES_PER_SPAWNED_WORKER = 4 * 1024 * 1024
#: A cyclic garbage collection once this many more objects that the collector tracks are alive than after the
#: last one (see ``_Job``): gc.get_count()[0] counts allocations less deallocations while the collector is off.
#: The engine breaks its own cycles (ScopeTree.release); what is left is little: a cold check of the five trees
#: of issue 27 (4,163 files) made one collection at 100,000 (52 ms, 69,000 objects freed), none at 400,000
#: (maxrss 61 -> 64 MB). This bounds a leak; it is not what frees a check's memory.
_GC_GROWTH = 400_000


class Mode(FrozenRecord):
    """How files are checked: fixing or not, unsafe fixes, TODO lines."""

    fix: bool = False
    unsafe_fixes: bool = False
    add_todos: bool = False

    def cache_name(self) -> str:
        if not self.fix:
            return "check"
        return "fix" + ("-unsafe" if self.unsafe_fixes else "") + ("-todos" if self.add_todos else "")


def start_method() -> str:
    """``fork`` where it is safe and cheap: Linux (macOS's system libraries are not fork-safe), and a
    process with no other thread (a forked child would hold copies of their locks)."""
    threading = sys.modules.get("threading")  # never imported: no thread was started through it
    threads = threading.active_count() if threading is not None else 1
    return "fork" if sys.platform.startswith("linux") and threads == 1 else "spawn"


def jobs_that_pay(paths: Sequence[Path], cores: int, method: str) -> int:
    """The processes worth starting for ``paths`` when the user did not say: one per
    ``MIN_BYTES_PER_*_WORKER`` of their size, at least one, at most ``cores``."""
    if cores < 2 or len(paths) < 2 * MIN_FILES_PER_WORKER:
        return 1
    per_worker = MIN_BYTES_PER_FORKED_WORKER if method == "fork" else MIN_BYTES_PER_SPAWNED_WORKER
    size = 0
    for path in paths:
        try:
            size += os.stat(path).st_size
        except OSError:
            continue
        if size >= cores * per_worker:
            return cores
    return max(1, size // per_worker)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def idle_cores(cores: int | None = None) -> int:
    """The cores that other processes leave to this run (at least one), from the one-minute load average as
    ``make -l`` reads it: on a machine whose cores are all busy with other jobs a second worker gets no core of
    its own, and only adds its cost. The load counts this process too (one runnable task)."""
    cores = available_cores() if cores is None else cores
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return cores
    return max(1, min(cores, cores - int(load - 1.0 + 0.5)))


def check_file(*args, **kwargs) -> FileResult:
    """linter.check_file, imported when a file first misses the cache: a rerun whose every file hits it never
    imports the engine that checks (the linter, the checker, the resolver and their tables)."""
    from torchpatch.engine.linter import check_file as check

    return check(*args, **kwargs)


class _Job:
    """The per-file work, the same in the main process (``-j 1``) and in each worker.

    Cyclic GC is off while files are checked: an AST is freed by reference counting alone, but the collector,
    triggered by the allocations of parsing, walks every live AST node again and again (a fifth of the run
    time on large trees). The per-file work makes no reference cycles of its own (none that holds a syntax
    tree: guards._collect_definitions), so a collection runs only when the objects alive have grown by
    ``_GC_GROWTH`` since the last one (a cycle made somewhere after all), not every so many files.
    """

    def __init__(self, settings: Sequence[Settings], mode: Mode, cached: dict[str, list] | None,
                 keyed: bool = False) -> None:
        self.settings = settings
        self.mode = mode
        self.cached = cached
        self.keyed = keyed  # compute each file's cache key (the main process has a cache to fill)
        # The caller froze what its imports made: what survives each collection is frozen too, so that the
        # next one walks only the objects made since.
        self.refreeze = gc.get_freeze_count() > 0

    def cached_result(self, path: Path, settings: Settings, stats: dict[str, str] | None = None,
                      by_stat: str | None = None) -> tuple[FileResult, str] | None:
        """The cached result of one file and its key, or None on a miss (or an unreadable file). ``by_stat``:
        the file's ``stat_key``; where ``stats`` maps it to an entry without findings, the file is not read."""
        from torchpatch.engine import cache as result_cache

        key = stats.get(by_stat) if stats and by_stat is not None else None
        stored = self.cached.get(key) if key is not None and self.cached is not None else None
        if stored is not None and isinstance(stored, list) and len(stored) == 2 and not stored[1]:
            try:
                return result_cache.from_entry(stored, path), key
            except (ValueError, TypeError, IndexError):
                pass
        if not self.cached:
            return None  # an empty cache answers nothing: the check reads the file once, not twice
        try:
            data = read_bytes(path)
        except OSError:
            return None
        key = result_cache.file_key(path, settings, data)
        stored = self.cached.get(key) if self.cached is not None else None
        if stored is None:
            return None
        try:
            result = result_cache.from_entry(stored, path)
        except (ValueError, TypeError, IndexError):
            return None
        if result.findings:
            _restore_text(result, data)
        return result, key

    def __call__(self, task: tuple[Path, int]) -> tuple[FileResult, str | None, list | None, bool]:
        path, settings_index = task
        settings = self.settings[settings_index]
        try:
            data = read_bytes(path)
        except OSError as error:
            return FileResult(path=path, error=f"cannot read: {error.strerror or error}"), None, None, False
        result = check_file(path, settings, fix=self.mode.fix, unsafe_fixes=self.mode.unsafe_fixes,
                            add_todos=self.mode.add_todos, data=data)
        if not result.findings and not result.fixed_count and not result.todo_count:
            result.source = result.original_text = result.fixed_text = None  # keep memory flat on big trees
        key = entry = None
        if self.keyed:
            from torchpatch.engine import cache as result_cache

            key = result_cache.file_key(path, settings, data)
            if result_cache.cacheable(result):
                entry = result_cache.to_entry(result)
        if gc.get_count()[0] > _GC_GROWTH:
            gc.collect()
            if self.refreeze:
                gc.freeze()
        return result, key, entry, False


#: ``executor(tasks, settings_list, mode, keyed)``: one ``_Job`` outcome per task, in order.
Executor = Callable[[list, list, Mode, bool], Iterator]


def run_batch(settings_list: Sequence[Settings], mode: Mode, keyed: bool,
              tasks: Sequence[tuple[Path, int]]) -> list[tuple[FileResult, str | None, list | None, bool]]:
    """Check a batch of files with one ``_Job`` (what a remote worker runs); a file that raises is
    reported for that file (an internal error) and the batch goes on."""
    job = _Job(settings_list, mode, None, keyed)
    outcomes = []
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for task in tasks:
            try:
                outcomes.append(job(task))
            except Exception as error:  # a bug in torchpatch: this file's result says so, the others stand
                outcomes.append((crashed_result(task[0], f"{type(error).__name__}: {error}"), None, None, False))
    finally:
        if was_enabled:
            gc.enable()
    return outcomes


def crashed_result(path: Path, why: str) -> FileResult:
    return FileResult(path=path, error=f"internal error ({why}); the file was left unchanged", internal_error=True)


def _restore_text(result: FileResult, data: bytes) -> None:
    """A cached result with findings gets its text back (JSON edit positions, --diff, the full format)."""
    from torchpatch.dependency_names import is_dependency_file
    from torchpatch.engine.source import Source, read_source

    if is_dependency_file(result.path):
        text = data.decode("utf-8-sig")
        source = Source(path=result.path, text=text)
    else:
        source = read_source(result.path, data)
    result.source, result.original_text, result.fixed_text = source, source.text, source.text


_worker_job: _Job | None = None


def _init_worker(settings: Sequence[Settings], mode: Mode, keyed: bool) -> None:
    global _worker_job
    gc.freeze()
    gc.disable()
    _worker_job = _Job(settings, mode, None, keyed)


def _run_in_worker(task: tuple[Path, int]):
    assert _worker_job is not None
    return _worker_job(task)


def _settled_stat_key(path: Path, settings: Settings, now_ns: int, folder: str) -> str | None:
    """The file's ``cache.stat_key`` when its stat had settled before this run began (``cache.settled``): a
    file written since may change again within its mtime's granularity, so it is keyed by its bytes only."""
    from torchpatch.engine import cache as result_cache

    try:
        status = os.stat(path)
    except OSError:
        return None
    return result_cache.stat_key(path, settings, status, folder) if result_cache.settled(status, now_ns) else None


def check_files(files: Sequence[Path], settings_of: Callable[[Path], Settings], mode: Mode, jobs: int | None,
                cache: "result_cache.ResultCache | None" = None,
                progress: Callable[[int], None] | None = None,
                executor: "Executor | None" = None,
                on_result: Callable[[int, FileResult], None] | None = None) -> list[FileResult]:
    """Check ``files`` (in this order) with up to ``jobs`` processes (None: as many as pay); results in the
    same order.

    ``on_result(position, result)``, when given, is called as each file's result arrives (a streamed
    report): cache hits first, then the misses in their order.

    Cache hits are answered here, in the main process; only the misses go to the workers, so a warm run
    never pays for starting a pool. ``executor``, when given, runs the misses instead of the pool (a distributed
    engine, through ``run_batch``); it must yield one outcome per task, in the tasks' order.
    """
    settings_list: list[Settings] = []
    index_of: dict[int, int] = {}
    results: list[FileResult | None] = [None] * len(files)
    misses: list[tuple[int, tuple[Path, int]]] = []
    done = 0
    lookup = _Job([], mode, cache.entries) if cache is not None else None
    settled_stats: dict[int, str] = {}  # position -> stat_key, for the files whose stat had settled
    now_ns, folder = time.time_ns(), os.getcwd()
    for position, path in enumerate(files):
        settings = settings_of(path)
        if id(settings) not in index_of:
            index_of[id(settings)] = len(settings_list)
            settings_list.append(settings)
        task = (path, index_of[id(settings)])
        hit = None
        if lookup is not None:
            by_stat = _settled_stat_key(path, settings, now_ns, folder)
            hit = lookup.cached_result(path, settings, cache.stats, by_stat)
            if by_stat is not None:
                settled_stats[position] = by_stat
        if hit is not None:
            results[position], key = hit
            cache.record(key, None, True)
            if position in settled_stats:
                cache.record_stat(settled_stats[position], key)
            if on_result is not None:
                on_result(position, results[position])
            done += 1
            if progress is not None:
                progress(done)
        else:
            misses.append((position, task))
    tasks = [task for _, task in misses]
    method = start_method()
    if jobs is None:
        jobs = jobs_that_pay([path for path, _ in tasks], idle_cores(), method) if executor is None else 1
    workers = min(jobs, len(misses) // MIN_FILES_PER_WORKER)
    if executor is not None:
        outcomes = executor(tasks, settings_list, mode, cache is not None) if tasks else iter(())
    else:
        outcomes = _results(tasks, settings_list, mode, workers, cache is not None, method)
    for (position, _), (result, key, entry, _hit) in zip(misses, outcomes):
        if cache is not None and key is not None:
            cache.record(key, entry, False)
            if entry is not None and position in settled_stats:
                cache.record_stat(settled_stats[position], key)
        results[position] = result
        if on_result is not None:
            on_result(position, result)
        done += 1
        if progress is not None:
            progress(done)
    return results  # type: ignore[return-value]


def _results(tasks, settings_list, mode: Mode, workers: int, keyed: bool, method: str = "spawn") -> Iterator:
    was_enabled = gc.isenabled()
    if len(tasks) >= MIN_FILES_PER_WORKER or workers >= 2:
        gc.collect()  # (a few milliseconds: not for a file or two, whose garbage frozen costs nothing)
    # What the imports created is never garbage: keep it out of every later collection (and, in a forked
    # worker, out of the pages a collection would write to).
    gc.freeze()
    gc.disable()
    try:
        if workers < 2:
            job = _Job(settings_list, mode, None, keyed)
            for task in tasks:
                yield job(task)
            return
        # Batches of files: one message each way per batch, and small enough that both workers finish together.
        chunksize = max(1, min(16, len(tasks) // (workers * 16)))
        if method == "fork":
            from torchpatch.engine import forked
            from torchpatch.rules import all_rules

            # Imported once here and shared by the forked helpers, instead of once in each of them as their
            # files first name what a rule watches.
            all_rules()
            # The rule index of each settings, built once here rather than once in each helper.
            first_path: dict[int, Path] = {}
            for path, settings_index in tasks:
                first_path.setdefault(settings_index, path)
            for settings_index, path in first_path.items():
                settings_list[settings_index].rules_for(path)
            gc.freeze()
            chunksize = max(chunksize, -(-len(tasks) // forked.dispenser_capacity()))
            yield from forked.outcomes(tasks, _Job(settings_list, mode, None, keyed), workers - 1, chunksize)
            return
        import multiprocessing  # only with workers (about 10 ms of a one-process start-up otherwise)

        context = multiprocessing.get_context(method)
        with context.Pool(workers, initializer=_init_worker, initargs=(settings_list, mode, keyed)) as pool:
            yield from pool.imap(_run_in_worker, tasks, chunksize)
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
