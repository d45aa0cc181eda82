"""``--add-noqa``: a ``# noqa: CODE`` on every line with a finding, merged into an existing directive."""

from __future__ import annotations

import io
import re
import tokenize

from torchpatch.engine.linter import _NOQA, FileResult, apply_edits, parse_text, ParseFailure
from torchpatch.engine.source import Locator
from torchpatch.engine.writer import write_fixed
from torchpatch.rules.base import Edit


def comment_rows(text: str) -> set[int] | None:
    """Rows whose end is outside any string and not continued with a backslash: a comment may go there."""
    rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                rows.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def noqa_edits(text: str, codes_by_row: dict[int, list[str]]) -> list[Edit]:
    locator = Locator(text)
    allowed = comment_rows(text)
    if allowed is None:
        return []
    edits = []
    for row, codes in sorted(codes_by_row.items()):
        if row not in allowed:
            continue  # inside a multi-line string or a continued line: a comment there would change the code
        line = locator.line(row)
        start = locator.line_starts[row - 1]
        existing = list(_NOQA.finditer(line))
        if existing:
            match = existing[-1]
            if not match.group("codes"):
                continue  # a blanket noqa already covers every code
            present = set(re.split(r"[,\s]+", match.group("codes").upper().strip()))
            new = [code for code in codes if code not in present]
            if new:
                end = start + match.end("codes")
                edits.append(Edit(end, end, ", " + ", ".join(new)))
            continue
        end = start + len(line)
        edits.append(Edit(end, end, f"  # noqa: {', '.join(codes)}"))
    return edits


def add_noqa(result: FileResult) -> int:
    """Add the directives to one checked file and write it; the number of lines changed."""
    text = result.original_text
    if text is None or result.source is None:
        return 0
    locator = Locator(text)
    codes_by_row: dict[int, list[str]] = {}
    for finding in result.findings:
        row, _ = locator.position(finding.start)
        codes = codes_by_row.setdefault(row, [])
        if finding.code not in codes:
            codes.append(finding.code)
    edits = noqa_edits(text, codes_by_row)
    if not edits:
        return 0
    new_text = apply_edits(text, edits)
    try:
        parse_text(new_text, result.path)
    except ParseFailure:
        return 0
    result.fixed_text = new_text
    return len(edits) if write_fixed(result) else 0
