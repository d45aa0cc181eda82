"""Lint one file: read, parse, run the rules, honour noqa; optionally apply fixes to a fixpoint."""

from __future__ import annotations

import ast
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from torchpatch.dependency_files import is_dependency_file
from torchpatch.engine.checker import check_tree
from torchpatch.engine.dependencies import check_dependencies
from torchpatch.engine.settings import Settings, torchfix_redirects
from torchpatch.engine.source import Locator, Source, UnreadableFile, read_source
from torchpatch.findings import SAFE, Diagnostic, Edit, Fix

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*torchpatch:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_MAX_FIX_ROUNDS = 10
_TORCH_HINT = "torch"


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


class ParseFailure(Exception):
    def __init__(self, message: str, lineno: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.lineno = lineno
        self.detail = detail


def parse_text(text: str, path: Path) -> ast.Module:
    """ast.parse, with every way it can fail turned into one readable reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes is the user's business
            return ast.parse(text, filename=str(path))
    except SyntaxError as error:
        detail = error.msg
        where = f" at line {error.lineno}" if error.lineno else ""
        raise ParseFailure(
            f"syntax error{where}: {detail} (parsed with Python {sys.version_info.major}.{sys.version_info.minor};"
            " syntax newer than this Python cannot be checked)", error.lineno, detail) from None
    except (RecursionError, MemoryError):
        raise ParseFailure("too deeply nested to parse") from None
    except ValueError as error:
        raise ParseFailure(f"cannot parse: {error}") from None


def lint_text(text: str, path: Path, settings: Settings, locator: Locator | None = None) -> list[Diagnostic]:
    index = settings.rules_for(path)
    if not index.rules or _TORCH_HINT not in text:
        # Still parse: a file that is not valid Python is reported whatever it mentions.
        parse_text(text, path)
        return []
    tree = parse_text(text, path)
    try:
        diagnostics = check_tree(text, tree, index, settings.target, settings.min_torch, locator)
    except RecursionError:
        raise ParseFailure("too deeply nested to check") from None
    diagnostics.sort(key=lambda d: (d.start, d.code))
    if any(d.fix is not None and d.fix.obsolete_names for d in diagnostics):
        _attach_import_removals(text, tree, diagnostics, locator)
    return diagnostics


def _attach_import_removals(text: str, tree: ast.Module, diagnostics: list[Diagnostic],
                            locator: Locator | None = None) -> None:
    """Each fix's own edits include the removal of the imports it alone leaves unused, so what
    ``--diff``/JSON show for a fix is every edit ``--fix`` makes for it. (An import that only all
    fixes together leave unused is removed after them, by remove_unused_imports.)"""
    locator = locator or Locator(text)
    obsolete = {name for d in diagnostics if d.fix is not None for name in d.fix.obsolete_names}
    uses: dict[str, list[int]] = {}
    imports = []
    for node in ast.walk(tree):  # one pass; positions only for the names a fix made obsolete
        kind = type(node)
        if kind is ast.Name:
            if node.id in obsolete:
                uses.setdefault(node.id, []).append(locator.offset_from_ast(node.lineno, node.col_offset))
        elif kind is ast.Import or kind is ast.ImportFrom:
            imports.append(node)
    exported = _names_in_dunder_all(tree)
    lonely = _only_imports(tree) if imports else set()
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None or not fix.obsolete_names:
            continue
        dead = set()
        for name in fix.obsolete_names:
            if name in exported or any(re.search(rf"(?<![\w.]){re.escape(name)}\b", edit.content) for edit in fix.edits):
                continue
            if all(any(edit.start <= offset < edit.end for edit in fix.edits) for offset in uses.get(name, ())):
                dead.add(name)
        if not dead:
            continue
        removals: list[Edit] = []
        for statement in imports:
            gone = [alias for alias in statement.names if _bound_name(alias) in dead]
            if not gone:
                continue
            if len(gone) == len(statement.names):
                removals.append(_statement_removal(statement, locator, text, id(statement) in lonely))
            else:
                removals.extend(_alias_removal(statement, alias, locator) for alias in gone)
        # Only when the removal touches nothing the fix edits (else the fix-point pass does it).
        if removals and not any(r.start < e.end and e.start < r.end for r in removals for e in fix.edits):
            fix.edits = [*fix.edits, *removals]


def check_file(path: Path, settings: Settings, fix: bool = False, unsafe_fixes: bool = False,
               add_todos: bool = False, data: bytes | None = None) -> FileResult:
    """Lint one file; ``data``, when given, is its content (stdin, or bytes already read for the cache):
    the result then depends on nothing but ``data``, the path and the settings."""
    result = FileResult(path=path)
    if is_dependency_file(path):
        return _check_dependency_file(path, settings, result, data)
    try:
        source = read_source(path, data)
    except UnreadableFile as error:
        result.error = str(error)
        return result
    except OSError as error:
        result.error = f"cannot read: {error.strerror or error}"
        return result
    return check_source(source, settings, fix, unsafe_fixes, add_todos)


def check_source(source: Source, settings: Settings, fix: bool = False, unsafe_fixes: bool = False,
                 add_todos: bool = False) -> FileResult:
    """check_file on text already read: an editor's unsaved buffer is checked exactly as the file would be."""
    path = source.path
    result = FileResult(path=path)
    result.source = source
    result.original_text = source.text
    file_codes = _file_level_noqa(source.text)
    if file_codes == "ALL":
        return result
    text = source.text
    try:
        diagnostics = unsuppressed(text, lint_text(text, path, settings), file_codes)
        if fix:
            text, diagnostics = _fix_to_fixpoint(text, path, settings, diagnostics, unsafe_fixes, result, file_codes)
        withhold_unparsable_fixes(text, path, diagnostics)
        if add_todos:
            text, diagnostics = _add_todos(text, path, settings, diagnostics, unsafe_fixes, result, file_codes)
            withhold_unparsable_fixes(text, path, diagnostics)
    except ParseFailure as error:
        result.error = _notebook_reason(source, error) or str(error)
        return result
    except Exception as error:  # a bug in torchpatch: report it for this file, leave the file alone, go on
        result.error = f"internal error ({type(error).__name__}: {error}); the file was left unchanged"
        result.internal_error = True
        result.fixed_count = result.todo_count = 0
        return result
    if "noqa" in text and "TP100" in settings.codes_for(path):
        try:
            text, diagnostics = _with_unused_noqa(text, path, settings, diagnostics, fix, unsafe_fixes, result, file_codes)
        except ParseFailure as error:
            result.error = str(error)
            return result
    result.fixed_text = text
    if diagnostics:
        locator = Locator(text)
        result.findings = [_place(diagnostic, locator, source, path) for diagnostic in diagnostics]
    return result


def _with_unused_noqa(text: str, path: Path, settings: Settings, diagnostics: list[Diagnostic], fix: bool,
                      unsafe_fixes: bool, result: FileResult, file_codes: set[str]) -> tuple[str, list[Diagnostic]]:
    """Add TP100 (unused ``# noqa``) to the final text's findings; with ``fix``, remove the unused codes first."""
    from torchpatch.engine.noqa import unused_noqa

    codes = settings.codes_for(path)
    unused = unsuppressed(text, unused_noqa(text, lint_text(text, path, settings), codes), file_codes)
    chosen = select_fixes([d for d in unused if fix_allowed(d.fix, unsafe_fixes)]) if fix else []
    new_text = _apply_parsing(text, path, chosen) if chosen else None
    if new_text is not None:
        for diagnostic in chosen:
            result.fixed_count += 1
            result.fixed_codes[diagnostic.code] = result.fixed_codes.get(diagnostic.code, 0) + 1
        text = new_text
        diagnostics = unsuppressed(text, lint_text(text, path, settings), file_codes)
        unused = unsuppressed(text, unused_noqa(text, lint_text(text, path, settings), codes), file_codes)
    return text, sorted([*diagnostics, *unused], key=lambda d: (d.start, d.code))


def _notebook_reason(source: Source, error: ParseFailure) -> str | None:
    """For a notebook: the cell (as Jupyter numbers it) and the line inside it, and the reason."""
    if not source.is_notebook or error.lineno is None:
        return None
    placed = source.cell_of_row(error.lineno)
    if placed is None:
        return None
    cell, row = placed
    line = cell.original_lines[row - 1].strip() if 0 < row <= len(cell.original_lines) else ""
    shown = f" ({line[:60]!r})" if line else ""
    return f"cell {cell.number}, line {row}: syntax error: {error.detail}{shown}; the notebook was not checked"


def _check_dependency_file(path: Path, settings: Settings, result: FileResult, data: bytes | None = None) -> FileResult:
    """Requirements, constraints, pyproject.toml and setup.cfg: pins are checked, never rewritten."""
    try:
        text = (path.read_bytes() if data is None else data).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        result.error = f"not valid utf-8: {error}"
        return result
    except OSError as error:
        result.error = f"cannot read: {error.strerror or error}"
        return result
    source = Source(path=path, text=text)
    result.source, result.original_text, result.fixed_text = source, text, text
    index = settings.rules_for(path)
    diagnostics = check_dependencies(path, text, index.rules, settings.target, settings.min_torch)
    file_codes = _file_level_noqa(text)
    if file_codes == "ALL":
        return result
    diagnostics = unsuppressed(text, sorted(diagnostics, key=lambda d: (d.start, d.code)), file_codes)
    if diagnostics:
        locator = Locator(text)
        result.findings = [_place(diagnostic, locator, source, path) for diagnostic in diagnostics]
    return result


def unsuppressed(text: str, diagnostics: list[Diagnostic], file_codes: set[str]) -> list[Diagnostic]:
    """The diagnostics that neither ``# noqa`` on their line nor a file-level noqa suppresses."""
    if not diagnostics:
        return diagnostics
    locator = Locator(text)
    kept = []
    for diagnostic in diagnostics:
        if file_codes and _suppressed_by(diagnostic.code, file_codes):
            continue
        row, _ = locator.position(diagnostic.start)
        if _noqa_suppresses(locator.line(row), diagnostic.code):
            continue
        kept.append(diagnostic)
    return kept


def _place(diagnostic: Diagnostic, locator: Locator, source: Source, path: Path) -> Finding:
    row, column = locator.position(diagnostic.start)
    end_row, end_column = locator.position(diagnostic.end)
    rule = diagnostic.rule
    finding = Finding(
        code=diagnostic.code, name=diagnostic.name, message=diagnostic.message, url=rule.url() if rule else "",
        path=path, row=row, column=column, end_row=end_row, end_column=end_column, fix=diagnostic.fix,
        noqa_row=row, source_line=locator.line(row), start=diagnostic.start, end=diagnostic.end,
        fix_unavailable=diagnostic.fix_unavailable,
    )
    finding.cell, finding.row, finding.end_row = source.place_rows(row, end_row)
    finding.noqa_row = finding.row
    return finding


def _suppressed_by(code: str, codes: set[str]) -> bool:
    if code in codes:
        return True
    redirects = torchfix_redirects()
    return any(code in redirects.get(other, ()) for other in codes)


def _noqa_suppresses(line: str, code: str) -> bool:
    if "noqa" not in line.lower():
        return False
    for match in _NOQA.finditer(line):
        codes = match.group("codes")
        if not codes:
            return True
        if _suppressed_by(code, set(re.split(r"[,\s]+", codes.upper().strip()))):
            return True
    return False


def _file_level_noqa(text: str) -> set[str] | str:
    if "torchpatch:" not in text:
        return set()
    for match in _FILE_NOQA.finditer(text):
        codes = match.group("codes")
        if not codes:
            return "ALL"
        return set(re.split(r"[,\s]+", codes.upper().strip()))
    return set()


# -- fixes --------------------------------------------------------------------------------------------

def fix_allowed(fix: Fix | None, unsafe_fixes: bool) -> bool:
    return fix is not None and (fix.applicability == SAFE or unsafe_fixes)


def _fix_to_fixpoint(text: str, path: Path, settings: Settings, diagnostics: list[Diagnostic],
                     unsafe_fixes: bool, result: FileResult,
                     file_codes: set[str] = frozenset()) -> tuple[str, list[Diagnostic]]:
    for _ in range(_MAX_FIX_ROUNDS):
        chosen = select_fixes([d for d in diagnostics if fix_allowed(d.fix, unsafe_fixes)])
        if not chosen:
            break
        new_text = _apply_parsing(text, path, chosen)
        if new_text is None:
            break
        for diagnostic in chosen:
            result.fixed_count += 1
            result.fixed_codes[diagnostic.code] = result.fixed_codes.get(diagnostic.code, 0) + 1
        obsolete = {name for d in chosen for name in d.fix.obsolete_names}
        if obsolete:
            new_text = remove_unused_imports(new_text, path, obsolete)
        text = new_text
        diagnostics = unsuppressed(text, lint_text(text, path, settings), file_codes)
    return text, diagnostics


_TODO = "# TODO(torchpatch): {code} {message}"


def _add_todos(text: str, path: Path, settings: Settings, diagnostics: list[Diagnostic], unsafe_fixes: bool,
               result: FileResult, file_codes: set[str]) -> tuple[str, list[Diagnostic]]:
    """A ``# TODO(torchpatch): CODE message`` line above each finding that no fix handles (once)."""
    locator = Locator(text)
    edits: list[Edit] = []
    seen: set[tuple[int, str]] = set()
    newline = "\r\n" if "\r\n" in text else "\n"
    for diagnostic in diagnostics:
        if fix_allowed(diagnostic.fix, unsafe_fixes):
            continue
        row, _ = locator.position(diagnostic.start)
        comment = _TODO.format(code=diagnostic.code, message=diagnostic.message)
        previous = locator.line(row - 1).strip() if row > 1 else ""
        if previous.startswith(f"# TODO(torchpatch): {diagnostic.code} ") or (row, diagnostic.code) in seen:
            continue
        seen.add((row, diagnostic.code))
        line = locator.line(row)
        indent = line[:len(line) - len(line.lstrip())]
        edits.append(Edit(locator.line_starts[row - 1], locator.line_starts[row - 1], f"{indent}{comment}{newline}"))
    if not edits:
        return text, diagnostics
    new_text = apply_edits(text, edits)
    if not _parses(new_text, path):
        return text, diagnostics
    result.todo_count += len(edits)
    return new_text, unsuppressed(new_text, lint_text(new_text, path, settings), file_codes)


def withhold_unparsable_fixes(text: str, path: Path, diagnostics: list[Diagnostic]) -> None:
    """A fix whose result does not parse is never applied (``--fix`` writes only code that parses), so it
    is not offered either: the finding loses its fix, is not counted as fixable, and says why in
    ``fix_unavailable`` (the full and JSON output show it). One parse when all fixes apply together."""
    offered = [d for d in diagnostics if d.fix is not None]
    if not offered:
        return
    together = select_fixes(offered)
    if len(together) == len(offered) and _parses(apply_edits(text, [e for d in together for e in d.fix.edits]), path):
        return
    for diagnostic in offered:
        try:
            parse_text(apply_edits(text, diagnostic.fix.edits), path)
        except ParseFailure as error:
            reason = f"syntax error at line {error.lineno}: {error.detail}" if error.lineno else str(error)
            diagnostic.fix_unavailable = f"its result would not parse ({reason}): {diagnostic.fix.message}"
            diagnostic.fix = None


def select_fixes(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Non-overlapping fixes, first by position then by code; a fix is applied whole or not at all."""
    chosen: list[Diagnostic] = []
    taken: list[tuple[int, int]] = []
    inserted: set[Edit] = set()
    for diagnostic in sorted(diagnostics, key=lambda d: (d.start, d.code)):
        edits = [e for e in diagnostic.fix.edits if not (e.start == e.end and e in inserted)]
        if any(_overlaps(edit, span) for edit in edits for span in taken):
            continue
        chosen.append(diagnostic)
        for edit in edits:
            taken.append((edit.start, edit.end))
            if edit.start == edit.end:
                inserted.add(edit)
    return chosen


def _overlaps(edit: Edit, span: tuple[int, int]) -> bool:
    start, end = span
    if edit.start == edit.end or start == end:
        return start < edit.start < end or edit.start < start < edit.end
    return edit.start < end and start < edit.end


def apply_edits(text: str, edits: list[Edit]) -> str:
    unique = sorted(dict.fromkeys(edits), key=lambda e: (e.start, e.end))  # same-offset insertions keep their order
    parts = []
    position = 0
    for edit in unique:
        parts.append(text[position:edit.start])
        parts.append(edit.content)
        position = max(position, edit.end)
    parts.append(text[position:])
    return "".join(parts)


def _apply_parsing(text: str, path: Path, chosen: list[Diagnostic]) -> str | None:
    """Apply the chosen fixes; keep only those whose result still parses."""
    new_text = apply_edits(text, [edit for d in chosen for edit in d.fix.edits])
    if _parses(new_text, path):
        return new_text
    good: list[Diagnostic] = []
    for diagnostic in chosen:
        candidate = apply_edits(text, [edit for d in [*good, diagnostic] for edit in d.fix.edits])
        if _parses(candidate, path):
            good.append(diagnostic)
    chosen[:] = good
    return apply_edits(text, [edit for d in good for edit in d.fix.edits]) if good else None


def _parses(text: str, path: Path) -> bool:
    try:
        parse_text(text, path)
    except ParseFailure:
        return False
    return True


def remove_unused_imports(text: str, path: Path, names: set[str]) -> str:
    """Drop the imports of ``names`` that the fixes left unused (and only those)."""
    tree = parse_text(text, path)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {node.value.id for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    dunder_all = _names_in_dunder_all(tree)
    locator = Locator(text)
    lonely = _only_statements(tree)
    edits: list[Edit] = []
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        dead = [alias for alias in statement.names
                if _bound_name(alias) in names and _bound_name(alias) not in used and _bound_name(alias) not in dunder_all]
        if not dead:
            continue
        if len(dead) == len(statement.names):
            edits.append(_statement_removal(statement, locator, text, id(statement) in lonely))
        else:
            edits.extend(_alias_removal(statement, alias, locator) for alias in dead)
    if not edits:
        return text
    new_text = apply_edits(text, edits)
    return new_text if _parses(new_text, path) else text


def _bound_name(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _names_in_dunder_all(tree: ast.Module) -> set[str]:
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets):
            if isinstance(statement.value, (ast.List, ast.Tuple)):
                return {e.value for e in statement.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _only_imports(tree: ast.AST) -> set[int]:
    """:func:`_only_statements`, for the import statements only (one pass over the statements, not every node)."""
    found: set[int] = set()
    blocks = [tree.body]
    while blocks:
        block = blocks.pop()
        if len(block) == 1 and block is not tree.body and type(block[0]) in (ast.Import, ast.ImportFrom):
            found.add(id(block[0]))
        for statement in block:
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if type(inner) is list and inner and isinstance(inner[0], ast.stmt):
                    blocks.append(inner)
            for holder in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
                blocks.append(holder.body)
    return found


def _only_statements(tree: ast.AST) -> set[int]:
    """ids of the statements that are alone in their block (``try:`` with one import): removing one needs a ``pass``."""
    return {id(block[0]) for node in ast.walk(tree) for name in ("body", "orelse", "finalbody")
            if isinstance(block := getattr(node, name, None), list) and len(block) == 1 and not isinstance(node, ast.Module)}


def _statement_removal(statement: ast.stmt, locator: Locator, text: str, alone: bool = False) -> Edit:
    start = locator.offset_from_ast(statement.lineno, statement.col_offset)
    end = locator.offset_from_ast(statement.end_lineno, statement.end_col_offset)
    if alone:  # the block's only statement: the block must keep one
        return Edit(start, end, "pass")
    line_start = locator.line_starts[statement.lineno - 1]
    next_row = statement.end_lineno
    line_end = locator.line_starts[next_row] if next_row < len(locator.line_starts) else len(text)
    before = text[line_start:start]
    after = text[end:line_end]
    if before.strip() == "" and after.strip() == "":
        # An import alone between blank lines (or at the top before one) takes one of them along:
        # no stray blank line is left behind.
        row = statement.lineno - 1
        previous_blank = row == 0 or locator.line(row).strip() == ""
        if previous_blank and next_row < len(locator.line_starts) and locator.line(next_row + 1).strip() == "":
            following_end = locator.line_starts[next_row + 1] if next_row + 1 < len(locator.line_starts) else len(text)
            return Edit(line_start, following_end, "")
        return Edit(line_start, line_end, "")
    # Shares its line with other code (``import a; x()``) or sits in a block alone: keep the block valid.
    return Edit(start, end, "pass")


def _alias_removal(statement: ast.stmt, alias: ast.alias, locator: Locator) -> Edit:
    names = statement.names
    index = names.index(alias)
    start = locator.offset_from_ast(alias.lineno, alias.col_offset)
    end = locator.offset_from_ast(alias.end_lineno, alias.end_col_offset)
    if index + 1 < len(names):
        following = names[index + 1]
        return Edit(start, locator.offset_from_ast(following.lineno, following.col_offset), "")
    previous = names[index - 1]
    return Edit(locator.offset_from_ast(previous.end_lineno, previous.end_col_offset), end, "")
