"""What checking a file gives: its findings placed in the file, and the file's result. Apart from the linter so
that what only reads results (the report, the result cache, a rerun whose every file hits the cache) does not
import the engine that makes them (issue 27)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchpatch.findings import SAFE, Fix

if TYPE_CHECKING:
    from torchpatch.engine.source import Source


@dataclass
class Finding:
    """A diagnostic placed in the file: 1-based rows, 0-based character columns (rows inside the cell for notebooks)."""

    code: str
    name: str
    message: str
    url: str
    path: Path
    row: int
    column: int
    end_row: int
    end_column: int
    fix: Fix | None
    noqa_row: int
    cell: int | None = None
    source_line: str = ""
    start: int = 0
    end: int = 0
    fix_unavailable: str | None = None  # why the rule's fix is not offered (``fix`` is then None)


@dataclass
class FileResult:
    """What checking one file gave: its findings, the fixed text, or the error that stopped it."""

    path: Path
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why the file could not be checked
    fixed_count: int = 0
    todo_count: int = 0  # ``# TODO(torchpatch)`` lines written by --add-todos
    internal_error: bool = False  # a bug in torchpatch, not in the file: the run exits 2
    fixed_codes: dict[str, int] = field(default_factory=dict)
    original_text: str | None = None
    fixed_text: str | None = None
    source: Source | None = None


def fix_allowed(fix: Fix | None, unsafe_fixes: bool) -> bool:
    return fix is not None and (fix.applicability == SAFE or unsafe_fixes)
