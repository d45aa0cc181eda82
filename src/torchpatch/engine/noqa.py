"""``--add-noqa``: a ``# noqa: CODE`` on every line with a finding, merged into an existing directive."""

from __future__ import annotations

import io
import re
import tokenize

from torchpatch.engine.linter import _NOQA, FileResult, ParseFailure, apply_edits, parse_text
from torchpatch.engine.settings import torchfix_redirects
from torchpatch.engine.source import Locator
from torchpatch.engine.writer import write_fixed
from torchpatch.findings import SAFE, UNSAFE, Diagnostic, Edit, Fix


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
    from torchpatch.dependency_files import is_dependency_file

    text = result.original_text
    if text is None or result.source is None or is_dependency_file(result.path):
        return 0  # pins: an inline comment is not valid everywhere (setup.cfg values), so never added
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


# -- TP100 unused-noqa --------------------------------------------------------------------------------

_OUR_CODE = re.compile(r"^(TP|TOR)\d+$")


def unused_noqa(text: str, raw: list[Diagnostic], enabled: frozenset[str]) -> list[Diagnostic]:
    """TP100: ``# noqa: TPxxx`` comments naming an enabled torchpatch rule that reports nothing on that line
    (ruff's RUF100). Codes of other tools and blanket ``# noqa`` are left alone: they may serve another linter."""
    from torchpatch.engine.linter import _suppressed_by

    locator = Locator(text)
    reported: dict[int, set[str]] = {}
    for diagnostic in raw:
        row, _ = locator.position(diagnostic.start)
        reported.setdefault(row, set()).add(diagnostic.code)
    redirects = torchfix_redirects()
    found = []
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []
    for token in tokens:
        row, column = token.start
        for match in _NOQA.finditer(token.string):
            if not match.group("codes"):
                continue
            codes = [code for code in re.split(r"[,\s]+", match.group("codes").upper().strip()) if code]
            unused = []
            for code in codes:
                if not _OUR_CODE.match(code) or code == "TP100":
                    continue
                targets = set(redirects.get(code, ())) if code.startswith("TOR") else {code}
                if not targets & enabled:
                    continue  # a rule this run does not check may still need its noqa elsewhere
                if not any(_suppressed_by(hit, {code}) for hit in reported.get(row, ())):
                    unused.append(code)
            if not unused:
                continue
            start = locator.offset(row, column) + match.start()
            end = locator.offset(row, column) + match.end()
            message = f"Unused `noqa` directive (unused: {', '.join(f'`{c}`' for c in unused)})"
            # TorchFix reads the same codes with its own analysis: its TOR101/TOR201 cover functions torchpatch maps
            # to no rule, and it reports ``from functorch import vmap`` in the ``except ImportError`` fallback that
            # torchpatch's guards accept (TorchRL), so removing a TOR code is safe for torchpatch only.
            torchfix_code = any(code.startswith("TOR") for code in unused)
            if torchfix_code:
                message += "; TorchFix, which reads the same `TOR` codes, may still report this line"
            fix = _unused_noqa_fix(text, locator, row, token, match, codes, unused, torchfix_code)
            found.append(Diagnostic(code="TP100", name="unused-noqa", message=message, start=start, end=end, fix=fix))
    return found


def _unused_noqa_fix(text: str, locator: Locator, row: int, token, match, codes: list[str],
                     unused: list[str], torchfix_code: bool) -> Fix | None:
    comment_start = locator.offset(row, token.start[1])
    kept = [code for code in codes if code not in unused]
    applicability, note = SAFE, ""
    if torchfix_code:
        applicability, note = UNSAFE, " (unsafe: TorchFix, if you also run it, may still need its `TOR` code here)"
    if kept:
        codes_start = comment_start + match.start("codes")
        codes_end = comment_start + match.end("codes")
        return Fix(f"Remove the unused codes{note}", [Edit(codes_start, codes_end, ", ".join(kept))], applicability)
    if token.string[match.end():].strip() or match.start() != 0:
        return None  # the comment says more than the directive: a human edits it
    line = locator.line(row)
    before = line[:token.start[1]]
    start = comment_start - (len(before) - len(before.rstrip()))
    return Fix(f"Remove the unused `noqa` directive{note}", [Edit(start, comment_start + len(token.string), "")],
               applicability)
