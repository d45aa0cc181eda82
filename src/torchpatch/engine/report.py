"""The per-file report of a large scan (``--report PATH``): one row per input file, every input listed.

A row is a plain dict: ``path``, ``status`` (``checked``, ``skipped`` or ``failed``), ``reason``, the
file's ``size`` and ``mtime`` (what ``--resume`` compares), ``config`` (a digest of torchpatch's version
and the settings that can change the result) and the tool's result: ``findings`` for ``check``;
``verdict``, ``weights_only``, ``format``, ``findings``, ``allowlist`` and ``bytes_read`` for ``audit``.
Rows are written as JSON Lines (``.jsonl``) or, through pyarrow, Parquet (``.parquet``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from torchpatch import __version__
from torchpatch.engine.linter import FileResult

STATUSES = ("checked", "skipped", "failed")
SUFFIXES = (".jsonl", ".parquet")


class ReportError(Exception):
    """A report that cannot be written or read (the front end turns it into a usage error)."""


def config_digest(*parts: str) -> str:
    digest = hashlib.blake2b(digest_size=8)
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
            raise ReportError("--report *.parquet needs pyarrow: pip install 'torchpatch[ray]' (or pyarrow)") from None


def write_rows(path: Path, rows: Iterable[dict[str, Any]], tool: str) -> int:
    """Write the rows (atomically: a temporary file in the same folder, then renamed); returns the count."""
    rows = list(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if path.suffix == ".parquet":
            _write_parquet(temporary, rows, tool)
        else:
            with open(temporary, "w", encoding="utf-8") as stream:
                for row in rows:
                    stream.write(json.dumps(row, separators=(",", ":")) + "\n")
        os.replace(temporary, path)
    except OSError as error:
        raise ReportError(f"--report {path}: {error.strerror or error}") from None
    finally:
        if temporary.exists():
            temporary.unlink()
    return len(rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier report (``--resume``); a malformed report is a clear error, never a guess."""
    try:
        if path.suffix == ".parquet":
            try:
                import pyarrow.parquet as parquet
            except ImportError:
                raise ReportError("--resume *.parquet needs pyarrow: pip install 'torchpatch[ray]'") from None
            rows = parquet.read_table(path).to_pylist()
        else:
            with open(path, encoding="utf-8") as stream:
                rows = [json.loads(line) for line in stream if line.strip()]
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


def _write_parquet(path: Path, rows: list[dict[str, Any]], tool: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as parquet

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
    schema = pa.schema(fields)
    names = schema.names
    table = pa.Table.from_pylist([{name: row.get(name) for name in names} for row in rows], schema=schema)
    parquet.write_table(table, path)
