"""What checking a file gives: its findings placed in the file, and the file's result. Apart from the linter so
that what only reads results (the report, the result cache, a rerun whose every file hits the cache) does not
import the engine that makes them (issue 27)."""

from __future__ import annotations

from pathlib import Path

from torchpatch._record import Record
from torchpatch.findings import SAFE, Fix

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from torchpatch.engine.source import Source


class Finding(Record):
    """A diagnostic placed in the file: 1-based rows, 0-based character columns (rows inside the cell for notebooks)."""

    _fields = ("code", "name", "message", "url", "path", "row", "column", "end_row", "end_column", "fix", "noqa_row",
               "cell", "source_line", "start", "end", "fix_unavailable")

    def __init__(self, code: str, name: str, message: str, url: str, path: Path, row: int, column: int, end_row: int,
                 end_column: int, fix: Fix | None, noqa_row: int, cell: int | None = None, source_line: str = "",
                 start: int = 0, end: int = 0, fix_unavailable: str | None = None) -> None:
        self.code = code
        self.name = name
        self.message = message
        self.url = url
        self.path = path
        self.row = row
        self.column = column
        self.end_row = end_row
        self.end_column = end_column
        self.fix = fix
        self.noqa_row = noqa_row
        self.cell = cell
        self.source_line = source_line
        self.start = start
        self.end = end
        self.fix_unavailable = fix_unavailable  # why the rule's fix is not offered (``fix`` is then None)


class FileResult(Record):
    """What checking one file gave: its findings, the fixed text, or the error that stopped it."""

    _fields = ("path", "findings", "error", "fixed_count", "todo_count", "internal_error", "fixed_codes",
               "original_text", "fixed_text", "source")

    def __init__(self, path: Path, findings: list[Finding] | None = None, error: str | None = None,
                 fixed_count: int = 0, todo_count: int = 0, internal_error: bool = False,
                 fixed_codes: dict[str, int] | None = None, original_text: str | None = None,
                 fixed_text: str | None = None, source: Source | None = None) -> None:
        self.path = path
        self.findings = [] if findings is None else findings
        self.error = error  # why the file could not be checked
        self.fixed_count = fixed_count
        self.todo_count = todo_count  # ``# TODO(torchpatch)`` lines written by --add-todos
        self.internal_error = internal_error  # a bug in torchpatch, not in the file: the run exits 2
        self.fixed_codes = {} if fixed_codes is None else fixed_codes
        self.original_text = original_text
        self.fixed_text = fixed_text
        self.source = source


def fix_allowed(fix: Fix | None, unsafe_fixes: bool) -> bool:
    return fix is not None and (fix.applicability == SAFE or unsafe_fixes)
