"""Lint one file: read, parse, run the rules, honour noqa; optionally apply fixes to a fixpoint."""

from __future__ import annotations

import ast
import bisect
import re
import symtable
import sys
import warnings
from collections import deque
from pathlib import Path
from collections.abc import Callable, Iterator

from torchpatch.dependency_names import is_dependency_file
from torchpatch.engine.checker import check_tree, nothing_to_check
from torchpatch.engine.codes import ENGINE_CODES
from torchpatch.engine.dependencies import check_dependencies
from torchpatch.engine.settings import Settings, torchfix_redirects
from torchpatch.engine.source import Locator, Source, UnreadableFile, read_source
from torchpatch.engine.results import FileResult, Finding, fix_allowed  # noqa: F401  (defined there, used here)
from torchpatch.findings import SAFE, Diagnostic, Edit, Fix
from torchpatch._lazy_pattern import LazyPattern
from torchpatch.syntax import mention_test

_NOQA = LazyPattern(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = LazyPattern(r"#\s*torchpatch:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_MAX_FIX_ROUNDS = 10
_TORCH_HINT = "torch"


class ParseFailure(Exception):
    def __init__(self, message: str, lineno: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.lineno = lineno
        self.detail = detail


#: The parser's messages for forms only Python 2 had (``print x``, ``exec code``, ``except E, e:``, ``0777``):
#: such a file is old code, not code too new for this Python.
_PYTHON_2_ERRORS = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
                    "multiple exception types must be parenthesized",
                    "leading zeros in decimal integer literals are not permitted")


def parse_text(text: str, path: Path) -> ast.Module:
    """ast.parse, with every way it can fail turned into one readable reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes is the user's business
            return ast.parse(text, filename=str(path))
    except SyntaxError as error:
        detail = error.msg
        where = f" at line {error.lineno}" if error.lineno else ""
        if detail.startswith(_PYTHON_2_ERRORS):
            why = "Python 2 code: torchpatch checks Python 3 files"
        elif isinstance(error, TabError):
            why = "tabs and spaces mixed in the indentation, which Python 3 rejects"
        elif isinstance(error, IndentationError):
            why = "broken indentation: no Python version parses it"
        else:
            why = (f"parsed with Python {sys.version_info.major}.{sys.version_info.minor};"
                   " syntax newer than this Python cannot be checked")
        raise ParseFailure(f"syntax error{where}: {detail} ({why})", error.lineno, detail) from None
    except (RecursionError, MemoryError):
        raise ParseFailure("too deeply nested to parse") from None
    except ValueError as error:
        raise ParseFailure(f"cannot parse: {error}") from None


def symtable_accepts(text: str, path: Path) -> bool:
    """True when ``text`` surely parses (parse_text would return a tree), found without building the
    tree's Python objects: ``symtable`` runs the same parser with the same flags, then only its symbol
    pass (about 40% less CPU than ast.parse). False means unknown: call parse_text, for the verdict and
    the reason. symtable rejects code that ast.parse accepts (a name both parameter and global,
    ``nonlocal`` at module level, ...), and it has its own recursion limit: it is used only where that
    limit is measured to be stricter than the one ast.parse applies when it builds the objects (Python
    3.10 and 3.11, where both limits count Python frames: called one frame deeper than ast.parse is by
    parse_text, symtable gives up two nesting levels sooner). On 3.12 and 3.13 ast.parse gives up one or
    two levels sooner (at about 3,000 and 10,000 nested operators) whatever the frames, so there this
    is always False. Call parse_text, when this says False, from where it was called before, so that
    its own limit stays where it was."""
    if not _SYMTABLE_IS_STRICTER:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes is the user's business
            _symbol_table(text, str(path))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: B036 - whatever it is, parse_text judges and words it
        return False
    return True


def _symbol_table(text: str, filename: str) -> None:
    """symtable.symtable, one Python frame deeper than ``symtable_accepts`` (see there why)."""
    symtable.symtable(text, filename, "exec")


_SYMTABLE_IS_STRICTER = sys.version_info < (3, 12)


def check_syntax(text: str, path: Path) -> None:
    """parse_text for a text whose tree is not needed: raises ParseFailure exactly when parse_text does,
    with the same reason (its fallback parse runs one frame deeper than a direct parse_text call, which on
    Python 3.10 and 3.11 lowers the recursion limit of that parse by three nesting levels; lint_text
    calls symtable_accepts and parse_text itself to keep it)."""
    if not symtable_accepts(text, path):
        parse_text(text, path)


def lint_text(text: str, path: Path, settings: Settings, locator: Locator | None = None,
              cuts: list[int] | None = None) -> list[Diagnostic]:
    """The file's diagnostics, sorted; ``cuts``, when given, receives the text's statement_cuts when a
    diagnostic offers a fix (for withhold_unparsable_fixes)."""
    index = settings.rules_for(path)
    if not index.rules or _TORCH_HINT not in text or nothing_to_check(text, index, settings.target, settings.min_torch):
        # Still parse: a file that is not valid Python is reported whatever it mentions.
        if not symtable_accepts(text, path):
            parse_text(text, path)
        return []
    tree = parse_text(text, path)
    try:
        diagnostics = check_tree(text, tree, index, settings.target, settings.min_torch, locator)
    except RecursionError:
        raise ParseFailure("too deeply nested to check") from None
    diagnostics.sort(key=lambda d: (d.start, d.code))
    if not any(d.fix is not None for d in diagnostics):
        return diagnostics
    locator = locator or Locator.of(text)
    if any(d.fix is not None and d.fix.obsolete_names for d in diagnostics):
        _attach_import_removals(text, tree, diagnostics, locator)
    if cuts is not None:
        cuts.extend(statement_cuts(tree, locator, text))
    return diagnostics


def statement_cuts(tree: ast.Module, locator: Locator, text: str) -> list[int]:
    """The offsets at which ``text`` (whose module is ``tree``) falls apart into runs of whole top-level
    statements that the tokenizer reads independently: 0, the end, and the start of each line that begins
    a top-level statement (its first decorator) at column 0 when no statement crosses that line's start
    and the line before does not end in a backslash (a line continuation joins the two lines). At such
    an offset the tokenizer is outside every bracket, string and continuation, and the next line's column 0
    closes every open block, so the text before it cannot change how the text after it parses."""
    cuts = [0]
    reach = 0  # the last row that a statement seen so far ends on
    line_starts = locator.line_starts
    for statement in tree.body:
        decorators = getattr(statement, "decorator_list", None)
        first = decorators[0] if decorators else statement
        row = first.lineno
        if row > reach and row > 1:
            offset = line_starts[row - 1]
            opening = text[offset:offset + 1]
            before = text[line_starts[row - 2]:offset].rstrip("\r\n")
            if (opening == "@" if decorators else statement.col_offset == 0) and not before.endswith("\\"):
                cuts.append(offset)
        reach = max(reach, statement.end_lineno)
    if cuts[-1] != len(text):
        cuts.append(len(text))
    return cuts


def edits_parse_in_place(text: str, edits: list[Edit], cuts: list[int], path: Path) -> bool:
    """True when the text with ``edits`` applied is sure to parse, judged from the spans between ``cuts``
    (``statement_cuts`` of ``text``, which parses) that the edits touch, each parsed alone with its edits.
    False means unknown: the caller parses the whole text (for the verdict and for the reason).

    ``text`` = P + M + Q with M a run of whole top-level statements between two cuts: when M with its
    edits (M') parses alone, ends with a line break that no backslash continues, then P + M' + Q parses,
    because P leaves the tokenizer in the state a fresh parse starts in (outside brackets, strings and
    continuations, the first line of M' at column 0 ends P's blocks) and M' leaves it so for Q."""
    if not edits:
        return False
    spans: list[list] = []  # [start, end, edits] of each run of statements the edits touch, in order
    # The end of the text starts a run only after a line break that no backslash continues.
    open_end = not text.endswith("\n") or text[:-1].rstrip("\r").endswith("\\")
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        first = bisect.bisect_right(cuts, edit.start) - 1
        if first and cuts[first] == len(text) and open_end:
            first -= 1
        start = cuts[first]
        end = cuts[bisect.bisect_left(cuts, edit.end)]
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2].append(edit)
        else:
            spans.append([start, end, [edit]])
    for start, end, inside in spans:
        piece = apply_edits(text[start:end], [Edit(e.start - start, e.end - start, e.content) for e in inside])
        if not piece:  # whole statements removed: what is left is P + Q
            continue
        if end < len(text) and (not piece.endswith("\n") or piece[:-1].rstrip("\r").endswith("\\")):
            return False
        if not _parses(piece, path):
            return False
    return True


def _attach_import_removals(text: str, tree: ast.Module, diagnostics: list[Diagnostic],
                            locator: Locator | None = None) -> None:
    """Each fix's own edits include the removal of the imports it alone leaves unused, so what
    ``--diff``/JSON show for a fix is every edit ``--fix`` makes for it. An import that only several
    fixes together leave unused (one local ``from torch.cuda.amp import autocast`` serving two
    ``with autocast():``) is removed by ``joint_edits`` on one of them, the last by position among the
    least safe: ``--fix`` applies those only with all of ``joint_fixes`` (fix_pass_edits), and the JSON
    edits of all findings, taken together, are what one ``--fix`` pass writes."""
    locator = locator or Locator(text)
    fixes = [d.fix for d in diagnostics if d.fix is not None]
    obsolete = {name for fix in fixes for name in fix.obsolete_names}
    edits = [edit for fix in fixes for edit in fix.edits]
    if all(_used_outside(name, edits, text, tree, locator) for name in obsolete):
        return  # every name is still used where no fix edits: no import becomes unused (often ``torch``)
    uses: dict[str, list[int]] = {}
    imports = []
    # ast.walk's order, without the statements whose lines do not mention an obsolete name: its uses and
    # the imports that bind it are all in the others (the other imports change nothing below).
    mentions = mention_test(text, obsolete, locator)
    for node in walk_mentioning(tree, mentions):
        kind = type(node)
        if kind is ast.Name:
            if node.id in obsolete:
                uses.setdefault(node.id, []).append(locator.offset_from_ast(node.lineno, node.col_offset))
        elif kind is ast.Import or kind is ast.ImportFrom:
            imports.append(node)
    if not imports:
        return
    exported = _names_in_dunder_all(tree)
    places = _import_places(tree, mentions)

    def removable(name: str) -> bool:
        return name not in exported and not any(_writes_name(edit.content, name) for fix in fixes for edit in fix.edits)

    def covers(fix: Fix, name: str) -> bool:
        return all(any(edit.start <= offset < edit.end for edit in fix.edits) for offset in uses.get(name, ()))

    def holders(name: str) -> list[Fix] | None:
        """The fixes that rewrite the uses of ``name``: None when a use is rewritten by none of them."""
        found: list[Fix] = []
        for offset in uses.get(name, ()):
            holder = next((f for f in fixes if any(edit.start <= offset < edit.end for edit in f.edits)), None)
            if holder is None:
                return None
            if not any(holder is f for f in found):
                found.append(holder)
        return found

    candidates = {name for name in obsolete if removable(name)}
    singly_dead = {name for name in candidates if any(name in f.obsolete_names and covers(f, name) for f in fixes)}
    # Names that only several fixes together leave unused, with those fixes.
    joint = {name: found for name in candidates - singly_dead if (found := holders(name)) and len(found) > 1}
    for fix in fixes:
        dead = {name for name in fix.obsolete_names if name in singly_dead and covers(fix, name)}
        if not dead:
            continue
        # A statement that also imports a jointly unused name is removed whole by the joint edits below.
        statements = [s for s in imports if any(_bound_name(a) in dead for a in s.names)
                      and not any(_bound_name(a) in joint for a in s.names)]
        removals = _removals(statements, dead, places, tree, locator, text)
        # Only when the removal touches nothing the fix edits (else the fix-point pass does it); the
        # blank line after it is left when the fix inserts there (a new import in the old one's place).
        if removals and _touches(removals, fix.edits):
            removals = _removals(statements, dead, places, tree, locator, text, take_blank=False)
        if removals and not _touches(removals, fix.edits):
            fix.edits = [*fix.edits, *removals]
    if not joint:
        return
    all_edits = [edit for fix in fixes for edit in fix.edits]
    for statement in imports:
        names = {_bound_name(a) for a in statement.names}
        if not names & joint.keys():
            continue
        dead = {name for name in names if name in joint or name in singly_dead}
        group: list[Fix] = []
        for name in sorted(dead):
            for fix in joint.get(name) or [f for f in fixes if name in f.obsolete_names and covers(f, name)][:1]:
                if not any(fix is f for f in group):
                    group.append(fix)
        removals = _removals([statement], dead, places, tree, locator, text)
        if removals and _touches(removals, all_edits):
            removals = _removals([statement], dead, places, tree, locator, text, take_blank=False)
        if not removals or _touches(removals, all_edits) or len(group) < 2:
            continue
        carrier = max(group, key=lambda f: (f.applicability != SAFE, max(e.start for e in f.edits)))
        carrier.joint_edits = [*carrier.joint_edits, *removals]
        carrier.joint_fixes = [*carrier.joint_fixes, *(f for f in group if f is not carrier
                                                       and not any(f is g for g in carrier.joint_fixes))]
        all_edits.extend(removals)


def _used_outside(name: str, edits: list[Edit], text: str, tree: ast.Module, locator: Locator,
                  tries: int = 64) -> bool:
    """True when an ``ast.Name`` of ``name`` lies outside every edit (then no fix, nor several together, leaves
    its import unused), found from the first few whole-word mentions of the text outside the edits, each
    looked up in the tree (a mention may be an import, an attribute, a string or a comment). False: not
    found so (the caller reads every use)."""
    at = text.find(name)
    while at >= 0 and tries:
        after = at + len(name)
        if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_.")) \
                and (after == len(text) or not (text[after].isalnum() or text[after] == "_")) \
                and not any(edit.start <= at < edit.end for edit in edits):
            tries -= 1
            row, column = locator.position(at)
            line = locator.line(row)
            if _name_at(tree, name, row, len(line[:column].encode("utf-8"))):
                return True
        at = text.find(name, after)
    return False


def _name_at(tree: ast.Module, name: str, row: int, utf8_column: int) -> bool:
    """Whether an ``ast.Name`` of ``name`` starts at ``row`` and ``utf8_column``: only the nodes whose span holds
    that place are entered (and those without a position, which hold nodes that have one)."""
    place = (row, utf8_column)
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            lineno = getattr(child, "lineno", None)
            if lineno is None:
                todo.append(child)
                continue
            if (lineno, child.col_offset) > place or (child.end_lineno, child.end_col_offset) <= place:
                continue
            if type(child) is ast.Name:
                if (lineno, child.col_offset) == place and child.id == name:
                    return True
                continue
            todo.append(child)
    return False


def walk_mentioning(tree: ast.Module, mentions: Callable[[ast.stmt], bool]) -> Iterator[ast.AST]:
    """ast.walk(tree) (the same order) without the statements for which ``mentions`` is False and what is
    inside them."""
    todo = deque(statement for statement in tree.body if mentions(statement))
    stmt = ast.stmt
    while todo:
        node = todo.popleft()
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, stmt) or mentions(child))
        yield node


def _touches(removals: list[Edit], edits: list[Edit]) -> bool:
    return any(r.start < e.end and e.start < r.end or r.start < e.start < r.end for r in removals for e in edits)


_IMPORTED_FROM = re.compile(r"\bfrom\s+[\w.]+\s+import\b")


def _writes_name(content: str, name: str) -> bool:
    """Whether an edit's new text uses ``name`` (the module path of a ``from M import x`` it adds does not)."""
    if name not in content:
        return False
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", _IMPORTED_FROM.sub("", content)) is not None


def fix_pass_edits(chosen: list[Diagnostic]) -> list[Edit]:
    """The edits one ``--fix`` pass makes for the chosen fixes: theirs, and the joint import removals of the
    groups it applies whole."""
    fixes = [d.fix for d in chosen]
    edits = [edit for fix in fixes for edit in fix.edits]
    for fix in fixes:
        if fix.joint_edits and all(any(other is f for f in fixes) for other in fix.joint_fixes):
            edits.extend(fix.joint_edits)
    return edits


def keep_complete_joint_removals(diagnostics: list[Diagnostic]) -> None:
    """Drop the joint import removals whose group lost a member (a noqa, a withheld fix): the import is
    still used there, and --fix keeps it."""
    fixes = [d.fix for d in diagnostics if d.fix is not None]
    for fix in fixes:
        if fix.joint_edits and not all(any(other is f for f in fixes) for other in fix.joint_fixes):
            fix.joint_edits, fix.joint_fixes = [], []


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
        cuts: list[int] = []
        diagnostics = unsuppressed(text, lint_text(text, path, settings, cuts=cuts), file_codes)
        if fix:
            text, diagnostics = _fix_to_fixpoint(text, path, settings, diagnostics, unsafe_fixes, result, file_codes)
        withhold_unparsable_fixes(text, path, diagnostics, cuts if cuts and text is source.text else None)
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
        keep_complete_joint_removals(diagnostics)
        locator = Locator.of(text)
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
        locator = Locator.of(text)
        result.findings = [_place(diagnostic, locator, source, path) for diagnostic in diagnostics]
    return result


def unsuppressed(text: str, diagnostics: list[Diagnostic], file_codes: set[str]) -> list[Diagnostic]:
    """The diagnostics that neither ``# noqa`` on their line nor a file-level noqa suppresses."""
    if not diagnostics:
        return diagnostics
    locator = Locator.of(text)
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
        code=diagnostic.code, name=diagnostic.name, message=diagnostic.message,
        url=rule.url() if rule else _engine_url(diagnostic.code),
        path=path, row=row, column=column, end_row=end_row, end_column=end_column, fix=diagnostic.fix,
        noqa_row=row, source_line=locator.line(row), start=diagnostic.start, end=diagnostic.end,
        fix_unavailable=diagnostic.fix_unavailable,
    )
    finding.cell, finding.row, finding.end_row = source.place_rows(row, end_row)
    finding.noqa_row = finding.row
    return finding


def _engine_url(code: str) -> str:
    engine = ENGINE_CODES.get(code)
    return engine.url() if engine is not None else ""


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


def withhold_unparsable_fixes(text: str, path: Path, diagnostics: list[Diagnostic], cuts: list[int] | None = None) -> None:
    """A fix whose result does not parse is never applied (``--fix`` writes only code that parses), so it
    is not offered either: the finding loses its fix, is not counted as fixable, and says why in
    ``fix_unavailable`` (the full and JSON output show it). One parse when all fixes apply together;
    with ``cuts`` (``statement_cuts`` of ``text``), only of the statements the edits touch when that
    settles it (edits_parse_in_place), else of the whole text, which gives the reason."""
    offered = [d for d in diagnostics if d.fix is not None]
    if not offered:
        return
    together = select_fixes(offered)
    if len(together) == len(offered):
        edits = [e for d in together for e in d.fix.edits]
        if cuts is not None and edits_parse_in_place(text, edits, cuts, path) or _parses(apply_edits(text, edits), path):
            return
    for diagnostic in offered:
        if cuts is not None and edits_parse_in_place(text, diagnostic.fix.edits, cuts, path):
            continue
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
    new_text = apply_edits(text, fix_pass_edits(chosen))
    if _parses(new_text, path):
        return new_text
    good: list[Diagnostic] = []
    for diagnostic in chosen:
        candidate = apply_edits(text, fix_pass_edits([*good, diagnostic]))
        if _parses(candidate, path):
            good.append(diagnostic)
    chosen[:] = good
    return apply_edits(text, fix_pass_edits(good)) if good else None


def _parses(text: str, path: Path) -> bool:
    if symtable_accepts(text, path):
        return True  # sure, without building the tree
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
    dead = {name for name in names if name not in used} - _names_in_dunder_all(tree)
    if not dead:
        return text
    statements = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    edits = _removals(statements, dead, _import_places(tree), tree, Locator(text), text)
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


def _import_places(tree: ast.Module, mentions: Callable[[ast.stmt], bool] | None = None) -> dict[int, tuple[list[ast.stmt], int]]:
    """Each import statement's block and index in it, by id (one pass over the statements, not every node);
    with ``mentions`` (mention_test), only the imports in the statements it is True for."""
    found: dict[int, tuple[list[ast.stmt], int]] = {}
    blocks = [tree.body]
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            if mentions is not None and not mentions(statement):
                continue
            kind = type(statement)
            if kind is ast.Import or kind is ast.ImportFrom:
                found[id(statement)] = (block, index)
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if type(inner) is list and inner and isinstance(inner[0], ast.stmt):
                    blocks.append(inner)
            for holder in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
                blocks.append(holder.body)
    return found


def _removals(statements: list[ast.stmt], dead: set[str], places: dict[int, tuple[list[ast.stmt], int]],
              tree: ast.Module, locator: Locator, text: str, take_blank: bool = True) -> list[Edit]:
    """The edits that remove the imports of the ``dead`` names from ``statements``: only those names from a
    statement that imports others too, else the whole statement (with its line and trailing comment)."""
    edits: list[Edit] = []
    whole: list[ast.stmt] = []
    for statement in statements:
        gone = [alias for alias in statement.names if _bound_name(alias) in dead]
        if not gone:
            continue
        if len(gone) == len(statement.names):
            whole.append(statement)
        else:
            edits.extend(_alias_removal(statement, alias, locator) for alias in gone)
    by_block: dict[int, tuple[list[ast.stmt], set[int]]] = {}
    for statement in whole:
        block, index = places[id(statement)]
        by_block.setdefault(id(block), (block, set()))[1].add(index)
    for block, indices in by_block.values():
        runs: list[list[int]] = []  # consecutive removed statements with only blank lines between them
        for index in sorted(indices):
            statement = block[index]
            if not _owns_its_lines(statement, locator, text):  # ``import a; x()``: the line stays
                edits.append(Edit(_start(statement, locator), _end(statement, locator), "pass"))
                continue
            previous = block[index - 1] if index else None
            if runs and runs[-1][-1] == index - 1 and all(
                    not locator.line(row).strip() for row in range(previous.end_lineno + 1, statement.lineno)):
                runs[-1].append(index)
            else:
                runs.append([index])
        # A block keeps one statement: when all of its statements go, the last becomes ``pass``.
        emptied = block is not tree.body and sum(map(len, runs)) == len(block)
        for number, run in enumerate(runs):
            edits.extend(_run_removal(block, run, block is tree.body, locator, text, take_blank,
                                      keep_pass=emptied and number == len(runs) - 1))
    return edits


def _start(statement: ast.stmt, locator: Locator) -> int:
    return locator.offset_from_ast(statement.lineno, statement.col_offset)


def _end(statement: ast.stmt, locator: Locator) -> int:
    return locator.offset_from_ast(statement.end_lineno, statement.end_col_offset)


def _line_end(row: int, locator: Locator, text: str) -> int:
    """The offset just past row ``row`` (1-based) and its line break."""
    return locator.line_starts[row] if row < len(locator.line_starts) else len(text)


def _owns_its_lines(statement: ast.stmt, locator: Locator, text: str) -> bool:
    """Nothing but blanks before it on its first line, and blanks or a comment after it on its last."""
    before = text[locator.line_starts[statement.lineno - 1]:_start(statement, locator)]
    after = text[_end(statement, locator):_line_end(statement.end_lineno, locator, text)].strip()
    return not before.strip() and (not after or after.startswith("#"))


def _is_blank(row: int, locator: Locator, text: str) -> bool:
    """Row ``row`` exists, has a line break or text, and holds only whitespace."""
    return row <= len(locator.line_starts) and locator.line_starts[row - 1] < len(text) and not locator.line(row).strip()


def _run_removal(block: list[ast.stmt], run: list[int], in_module: bool, locator: Locator, text: str,
                 take_blank: bool, keep_pass: bool = False) -> list[Edit]:
    """Remove the lines of consecutive import statements so that the code reads as if they had never been
    there (ruff's and pyupgrade's import removal): an import that opens a block takes the blank lines after
    it along; one between blank lines takes one of them; blank lines that separate other statements stay."""
    first, last = block[run[0]], block[run[-1]]
    start = locator.line_starts[first.lineno - 1]
    if keep_pass:
        kept = [Edit(start, locator.line_starts[last.lineno - 1], "")] if len(run) > 1 else []
        return [*kept, Edit(_start(last, locator), _end(last, locator), "pass")]
    end = _line_end(last.end_lineno, locator, text)
    below, above = last.end_lineno + 1, first.lineno - 1
    if take_blank and _is_blank(below, locator, text):
        if not in_module and run[0] == 0 and not locator.line(above).lstrip().startswith("#"):
            while _is_blank(below, locator, text):
                below += 1
            end = locator.line_starts[below - 1] if below <= len(locator.line_starts) else len(text)
        elif above == 0 or not locator.line(above).strip():
            end = _line_end(below, locator, text)
    return [Edit(start, end, "")]


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
