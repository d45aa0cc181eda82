"""The per-file report of a large scan (``--report PATH``): one row per input file, every input listed.

A row is a plain dict: ``path``, ``status`` (``checked``, ``skipped`` or ``failed``), ``reason``, the
file's ``size`` and ``mtime`` (what ``--resume`` compares), ``config`` (a digest of torchpatch's version
and the settings that can change the result) and the tool's result: ``findings`` for ``check``;
``verdict``, ``weights_only``, ``format``, ``findings``, ``allowlist`` and ``bytes_read`` for ``audit``.
Rows are written as JSON Lines (``.jsonl``) or, through pyarrow, Parquet (``.parquet``).

A report is streamed as results arrive (``ReportWriter``): rows go to ``PATH.partial`` (each JSON line
flushed as it is written; Parquet in row groups of ``PARQUET_ROW_GROUP`` rows), renamed to ``PATH`` when
the run ends. A killed run leaves the old ``PATH`` untouched and a ``.partial`` that ``--resume`` reads (a
``.jsonl.partial`` whose last line was cut off mid-write loses that line only; a Parquet partial is
readable when the run ended by an exception, not after a kill: its footer is written on close).
"""

from __future__ import annotations

from torchpatch._hashing import blake2b
import json
import os
from pathlib import Path
from typing import Any, Iterable

from torchpatch import __version__, install_hint
from torchpatch.engine.results import FileResult

STATUSES = ("checked", "skipped", "failed")
SUFFIXES = (".jsonl", ".parquet")
PARTIAL = ".partial"
#: Rows per Parquet row group: the rows a Parquet report holds in memory before they reach the disk.
PARQUET_ROW_GROUP = 1000


class ReportError(Exception):
    """A report that cannot be written or read (the front end turns it into a usage error)."""


def config_digest(*parts: str) -> str:
    digest = blake2b(digest_size=8)
    digest.update("\0".join((__version__, *parts)).encode())
    return digest.hexdigest()


def check_row(result: FileResult, size: int | None, mtime: float | None, config: str) -> dict[str, Any]:
    if result.error is not None:
        status, reason = "failed", result.error
    else:
        status, reason = "checked", ""
    findings = [{"code": f.code, "message": f.message, "row": f.row, "column": f.column, "end_row": f.end_row,
                 "end_column": f.end_column, "fix": None if f.fix is None else f.fix.applicability}
                for f in result.findings]
    return {"path": str(result.path), "status": status, "reason": reason, "size": size, "mtime": mtime,
            "config": config, "findings": findings}


def validate_path(path: Path) -> None:
    """A usage check before any work: a known suffix, and pyarrow present for Parquet."""
    if path.suffix not in SUFFIXES:
        raise ReportError(f"--report {path}: the name must end in .jsonl or .parquet")
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ReportError(f"--report *.parquet needs pyarrow: {install_hint('ray')} (or pyarrow)") from None


def partial_path(path: Path) -> Path:
    return path.with_name(path.name + PARTIAL)


class ReportWriter:
    """Rows written as they come (``write``), to ``PATH.partial``; ``close`` renames it to ``PATH``.

    Used as a context manager: on an exception the partial file is closed (flushed, and for Parquet given
    its footer) and left in place for ``--resume``; the old report is never touched until the rename."""

    def __init__(self, path: Path, tool: str) -> None:
        self.path = path
        self.partial = partial_path(path)
        self.count = 0
        self._buffer: list[dict[str, Any]] = []
        self._stream = None
        self._parquet = None
        self._discarded = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".parquet":
                import pyarrow.parquet as parquet

                self._schema = _parquet_schema(tool)
                self._parquet = parquet.ParquetWriter(self.partial, self._schema)
            else:
                self._stream = open(self.partial, "w", encoding="utf-8")
        except OSError as error:
            raise ReportError(f"--report {path}: {error.strerror or error}") from None

    def write(self, row: dict[str, Any]) -> None:
        try:
            if self._stream is not None:
                self._stream.write(json.dumps(row, separators=(",", ":")) + "\n")
                self._stream.flush()
            else:
                self._buffer.append(row)
                if len(self._buffer) >= PARQUET_ROW_GROUP:
                    self._flush_parquet()
        except OSError as error:
            raise ReportError(f"--report {self.path}: {error.strerror or error}") from None
        self.count += 1

    def _flush_parquet(self) -> None:
        import pyarrow as pa

        if self._buffer:
            names = self._schema.names
            self._parquet.write_table(pa.Table.from_pylist([{name: row.get(name) for name in names}
                                                            for row in self._buffer], schema=self._schema))
            self._buffer = []

    def _close_file(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._parquet is not None:
            try:
                self._flush_parquet()
            finally:
                self._parquet.close()
                self._parquet = None

    def close(self) -> int:
        """The partial file renamed into place; returns the number of rows."""
        if self._discarded:
            return 0
        try:
            self._close_file()
            os.replace(self.partial, self.path)
        except OSError as error:
            raise ReportError(f"--report {self.path}: {error.strerror or error}") from None
        return self.count

    def abandon(self) -> None:
        """The run stopped early: the partial file stays (complete up to its last row) for ``--resume``."""
        try:
            self._close_file()
        except Exception:  # already failing: the original error is what the user must see
            pass

    def discard(self) -> None:
        """Nothing worth a report (the run ended in a usage error): no partial file left behind."""
        self.abandon()
        self._discarded = True
        try:
            self.partial.unlink()
        except OSError:
            pass

    def __enter__(self) -> "ReportWriter":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
        else:
            self.abandon()


def write_rows(path: Path, rows: Iterable[dict[str, Any]], tool: str) -> int:
    """Write the rows (through ``PATH.partial``, renamed into place at the end); returns the count."""
    with ReportWriter(path, tool) as writer:
        for row in rows:
            writer.write(row)
    return writer.count


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier report (``--resume``); a malformed report is a clear error, never a guess."""
    try:
        if path.suffix == ".parquet" or path.name.endswith(".parquet" + PARTIAL):
            try:
                import pyarrow.parquet as parquet
            except ImportError:
                raise ReportError(f"--resume *.parquet needs pyarrow: {install_hint('ray')}") from None
            rows = parquet.read_table(path).to_pylist()
        else:
            with open(path, encoding="utf-8") as stream:
                lines = stream.read().split("\n")
            # A run killed mid-write can leave its last line cut short (no newline after it): that file is
            # simply checked again. Any other malformed line is an error.
            if lines and lines[-1].strip() and path.name.endswith(PARTIAL):
                try:
                    json.loads(lines[-1])
                except ValueError:
                    lines.pop()
            rows = [json.loads(line) for line in lines if line.strip()]
    except OSError as error:
        raise ReportError(f"--resume {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise ReportError(f"--resume {path}: not a torchpatch report ({error})") from None
    except Exception as error:  # pyarrow's own errors (not a Parquet file)
        raise ReportError(f"--resume {path}: not a torchpatch report ({type(error).__name__}: {error})") from None
    for row in rows:
        if not isinstance(row, dict) or not {"path", "status", "size", "mtime", "config"} <= row.keys():
            raise ReportError(f"--resume {path}: not a torchpatch report (a row lacks path/status/size/mtime/config)")
    return rows


def resumable(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows whose result can be reused, by path: checked ones only (a failure is tried again)."""
    return {row["path"]: row for row in rows if row.get("status") == "checked"}


def still_valid(row: dict[str, Any] | None, size: int | None, mtime: float | None, config: str) -> bool:
    """The same file (path, size and mtime) under the same settings and torchpatch version."""
    return (row is not None and size is not None and mtime is not None and row.get("size") == size
            and row.get("mtime") == mtime and row.get("config") == config)


def _parquet_schema(tool: str):
    import pyarrow as pa

    common = [("path", pa.string()), ("status", pa.string()), ("reason", pa.string()), ("size", pa.int64()),
              ("mtime", pa.float64()), ("config", pa.string())]
    if tool == "check":
        finding = pa.struct([("code", pa.string()), ("message", pa.string()), ("row", pa.int64()),
                             ("column", pa.int64()), ("end_row", pa.int64()), ("end_column", pa.int64()),
                             ("fix", pa.string())])
        fields = common + [("findings", pa.list_(finding))]
    else:
        finding = pa.struct([("member", pa.string()), ("offset", pa.int64()), ("severity", pa.string()),
                             ("code", pa.string()), ("message", pa.string())])
        fields = common + [("verdict", pa.string()), ("weights_only", pa.string()), ("format", pa.string()),
                           ("findings", pa.list_(finding)), ("allowlist", pa.list_(pa.string())),
                           ("bytes_read", pa.int64())]
    return pa.schema(fields)
