"""The result cache: a file's findings keyed by its bytes, its path, torchpatch's version and the settings
that can change them, so an unchanged tree is re-checked without parsing (like ruff's ``.ruff_cache``).

Entries are plain JSON (a cache in a checked-out tree is not trusted code: nothing is unpickled); a
malformed or foreign entry is a miss. The cache file is replaced atomically.
"""

from __future__ import annotations

from torchpatch._hashing import blake2b
import json
import os
from pathlib import Path

from torchpatch import __version__
from torchpatch.engine.results import FileResult, Finding
from torchpatch.engine.settings import Settings
from torchpatch.findings import Edit, Fix
from torchpatch.rules._manifest import package_fingerprint

CACHE_FOLDER = ".torchpatch_cache"
CACHE_ENV = "TORCHPATCH_CACHE_DIR"
_FORMAT = 2
#: Entries kept beyond the files of the current run before the ones it did not touch are dropped.
_SPARE_ENTRIES = 20_000


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or CACHE_FOLDER)


def code_fingerprint() -> str:
    """torchpatch's version and the size and mtime of each of its own files: an edited rule in an editable
    install is a new key, not a stale answer."""
    return package_fingerprint()


def file_key(path: Path, settings: Settings, data: bytes) -> str:
    digest = blake2b(digest_size=20)
    digest.update(f"{_FORMAT}\0{code_fingerprint()}\0{_posix_absolute(path)}\0{settings.result_key(path)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


#: How much older than the moment it was read a file's mtime must be for its stat to stand for its bytes
#: (``stat_key``): a write later than that has a later mtime, whatever the file system's clock granularity
#: (git's "racily clean" entries, the same reason).
STAT_SETTLED_NS = 2_000_000_000


def stat_key(path: Path, settings: Settings, status: os.stat_result, folder: str) -> str:
    """A key for a file by its stat (size, mtime, ctime, inode) instead of its bytes: the warm rerun's lookup
    (``ResultCache.stats`` maps it to the bytes' ``file_key``), as ruff's cache keys a file by its mtime. ctime
    changes with every write and cannot be set back, so restoring an mtime does not hide an edit. ``folder``:
    the working folder, which a relative ``path`` is read from (another spelling of a path is only a miss)."""
    digest = blake2b(digest_size=20)
    digest.update(f"{_FORMAT}\0{code_fingerprint()}\0{folder}\0{os.fspath(path)}\0{settings.result_key(path)}\0"
                  f"{status.st_size}\0{status.st_mtime_ns}\0{status.st_ctime_ns}\0{status.st_ino}".encode())
    return digest.hexdigest()


def settled(status: os.stat_result, now_ns: int) -> bool:
    """Whether a file stat'ed at ``now_ns`` may be keyed by its stat (``STAT_SETTLED_NS``)."""
    return max(status.st_mtime_ns, status.st_ctime_ns) < now_ns - STAT_SETTLED_NS


def _posix_absolute(path: Path) -> str:
    """``Path(os.path.abspath(path)).as_posix()``: on POSIX the string abspath returns is already that (it is
    normalised: no ``.``, ``..``, doubled or trailing slash), without a Path made per file of a warm rerun."""
    absolute = os.path.abspath(path)
    return absolute if os.sep == "/" else Path(absolute).as_posix()


class ResultCache:
    """One JSON file per (torchpatch version, run mode) under the cache folder."""

    def __init__(self, folder: Path, mode: str) -> None:
        self.folder = folder
        self.path = folder / __version__ / f"{mode}.json"
        self.entries: dict[str, list] = {}
        self.new_entries: dict[str, list] = {}
        #: stat_key -> file_key, for the files whose stat had settled when they were read.
        self.stats: dict[str, str] = {}
        self.new_stats: dict[str, str] = {}
        self.used: set[str] = set()
        self.save_error: OSError | None = None  # why the last save failed, for the front end to say
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("entries"), dict):
            self.entries = data["entries"]
            stats = data.get("stats")
            if isinstance(stats, dict):
                self.stats = stats

    def record_stat(self, by_stat: str, key: str) -> None:
        """The file whose stat gives ``by_stat`` holds the bytes of ``key`` (its stat had settled: ``settled``)."""
        if self.stats.get(by_stat) != key:
            self.new_stats[by_stat] = key

    def record(self, key: str, entry: list | None, hit: bool) -> None:
        if hit:
            self.used.add(key)
        elif entry is not None:
            self.new_entries[key] = entry

    def save(self) -> None:
        """Write the cache atomically; a failure (read-only tree) only costs the next run its speed, and is kept
        in ``save_error`` for the front end to report."""
        self.save_error = None
        if not self.new_entries and not self.new_stats:
            return
        entries = dict(self.entries)
        if len(entries) > len(self.used) + _SPARE_ENTRIES:
            entries = {key: entries[key] for key in self.used if key in entries}
        entries.update(self.new_entries)
        stats = {by_stat: key for by_stat, key in (*self.stats.items(), *self.new_stats.items())
                 if isinstance(key, str) and key in entries}
        import tempfile

        try:
            _prepare_folder(self.folder)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".cache.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    json.dump({"format": _FORMAT, "entries": entries, "stats": stats}, stream, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
        except OSError as error:
            self.save_error = error


def _prepare_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    gitignore = folder / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# Automatically created by torchpatch.\n*\n", encoding="utf-8")
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n"
                       "# This file is a cache directory tag created by torchpatch.\n", encoding="utf-8")


def clean(folder: Path) -> bool:
    """Remove the cache folder (``torchpatch clean``); True when there was one."""
    if not folder.exists():
        return False
    if not (folder / "CACHEDIR.TAG").is_file():
        raise OSError(f"{folder} does not look like a torchpatch cache (no CACHEDIR.TAG): not removed")
    import shutil

    shutil.rmtree(folder)
    return True


# -- entries ------------------------------------------------------------------------------------------

def cacheable(result: FileResult) -> bool:
    """Only results that rewrote nothing and hit no internal error: a cache hit never writes a file."""
    return not result.internal_error and not result.fixed_count and not result.todo_count


def to_entry(result: FileResult) -> list:
    return [result.error, [_finding_entry(finding) for finding in result.findings]]


def _finding_entry(f: Finding) -> list:
    fix = None
    if f.fix is not None:
        fix = [f.fix.message, f.fix.applicability, [[e.start, e.end, e.content] for e in f.fix.edits],
               list(f.fix.obsolete_names), [[e.start, e.end, e.content] for e in f.fix.joint_edits]]
    return [f.code, f.name, f.message, f.url, f.row, f.column, f.end_row, f.end_column, fix, f.noqa_row, f.cell,
            f.source_line, f.start, f.end, f.fix_unavailable]


def from_entry(entry: list, path: Path) -> FileResult:
    """The FileResult an entry stands for; raises ValueError/TypeError/IndexError on a malformed entry."""
    error, findings = entry
    if error is not None and not isinstance(error, str):
        raise ValueError("malformed cache entry")
    result = FileResult(path=path, error=error)
    for item in findings:
        (code, name, message, url, row, column, end_row, end_column, fix, noqa_row, cell, source_line,
         start, end, fix_unavailable) = item
        if fix_unavailable is not None and not isinstance(fix_unavailable, str):
            raise ValueError("malformed cache entry")
        if fix is not None:
            fix_message, applicability, edits, obsolete, joint_edits = fix
            fix = Fix(message=fix_message, applicability=applicability,
                      edits=[Edit(int(s), int(e), str(c)) for s, e, c in edits], obsolete_names=tuple(obsolete),
                      joint_edits=[Edit(int(s), int(e), str(c)) for s, e, c in joint_edits])
        result.findings.append(Finding(
            code=str(code), name=str(name), message=str(message), url=str(url), path=path, row=int(row),
            column=int(column), end_row=int(end_row), end_column=int(end_column), fix=fix, noqa_row=int(noqa_row),
            cell=None if cell is None else int(cell), source_line=str(source_line), start=int(start), end=int(end),
            fix_unavailable=fix_unavailable))
    return result
