"""The language server (pygls 2): diagnostics, code actions and hover for Python files in any LSP editor."""

from __future__ import annotations

import ast
import asyncio
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from torchpatch import __version__
from torchpatch.docs import render_rule_page
from torchpatch.engine.linter import FileResult, Finding, ParseFailure, apply_edits, parse_text, \
    remove_unused_imports
from torchpatch.engine.source import Locator
from torchpatch.frontends.buffer import SETTINGS_FILES, SettingsError, check_text, is_settings_file, rule_by_code, \
    settings_for, syntax_error_position
from torchpatch.rules import all_rules
from torchpatch.rules.base import SAFE, Rule

SOURCE = "torchpatch"
UNCHECKED_CODE = "TP001"
#: How long typing must pause before a changed buffer is checked again.
DEBOUNCE_SECONDS = 0.25
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.torchpatch"
PYTHON_SUFFIXES = (".py", ".pyi")

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # LSP's line breaks: \n, \r\n, \r (not str.splitlines')
_NOQA_CODES = re.compile(r"#\s*noqa:\s*[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*", re.IGNORECASE)


@dataclass
class Checked:
    """One lint of one version of a document."""

    version: int | None
    text: str
    result: FileResult | None  # None: the workspace configuration is invalid
    settings_error: str | None = None
    # Computed when first asked for (a code action), then kept for this version: on a large file
    # fixing everything to a fixpoint takes seconds, and editors ask for code actions as the cursor moves.
    fixed_text: str | None = None
    tree_dump: str | None = None


class TorchpatchServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: pygls applies incremental edits to lines split by str.splitlines, which also breaks at
        # \f (common in older Python files), \v, \x1c-\x1e, \x85 and \u2028; LSP clients break only at \n, \r\n
        # and \r, so an incremental edit after such a character would land in the wrong place.
        super().__init__("torchpatch", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.checked: dict[str, Checked] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}

    # -- linting --------------------------------------------------------------------------------------------
    def is_python(self, document: TextDocument) -> bool:
        """A Python file or unsaved buffer; not a notebook cell (a cell alone misses its notebook's imports)."""
        if not document.uri.startswith(("file:", "untitled:")):
            return False
        return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)

    def path_of(self, document: TextDocument) -> Path:
        if document.path:
            return Path(document.path)
        root = self.workspace.root_path
        return Path(root or ".").absolute() / "untitled.py"  # an unsaved buffer: the workspace's settings

    def check(self, document: TextDocument) -> Checked:
        """The lint of the document's current text (reused while the document is unchanged)."""
        text = document.source
        cached = self.checked.get(document.uri)
        if cached is not None and cached.version == document.version and cached.text == text:
            return cached
        path = self.path_of(document)
        try:
            settings = settings_for(path)  # found again each time: an edited pyproject.toml applies at once
        except SettingsError as error:
            checked = Checked(document.version, text, None, str(error))
        else:
            checked = Checked(document.version, text, check_text(path, text, settings))
        self.checked[document.uri] = checked
        return checked

    def publish(self, uri: str) -> None:
        self.pending.pop(uri, None)
        document = self.workspace.text_documents.get(uri)
        if document is None or not self.is_python(document):
            return
        checked = self.check(document)
        positions = Positions(checked.text, document)
        diagnostics = [diagnostic_of(finding, positions) for finding in findings_of(checked)]
        if checked.settings_error is not None:
            diagnostics = [unchecked_diagnostic(f"file not checked: {checked.settings_error}", positions.range(0, 0))]
        elif checked.result is not None and checked.result.error is not None:
            row, column = syntax_error_position(checked.text)
            row = min(row, len(positions.locator.line_starts))
            offset = positions.locator.offset(row, min(column, len(positions.locator.line(row))))
            diagnostics = [unchecked_diagnostic(f"file not checked: {checked.result.error}",
                                                positions.range(offset, offset))]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version))

    def publish_later(self, uri: str) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self.publish, uri)

    def publish_all(self) -> None:
        """Check every open document again (the settings changed, so no earlier result holds)."""
        self.checked.clear()
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    def forget(self, uri: str) -> None:
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.checked.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- code actions -----------------------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = self.workspace.get_text_document(params.text_document.uri)
        if not self.is_python(document):
            return []
        checked = self.check(document)
        findings = findings_of(checked)
        if not findings:
            return []
        positions = Positions(checked.text, document)
        start = positions.offset(params.range.start)
        end = positions.offset(params.range.end)
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _kind_wanted(types.CodeActionKind.QuickFix, wanted):
            here = [f for f in findings if f.start <= end and start <= f.end]
            for finding in here:
                action = self.fix_action(finding, checked, positions, document)
                if action is not None:
                    actions.append(action)
            for finding in here:
                action = self.noqa_action(finding, checked, positions, document)
                if action is not None:
                    actions.append(action)
            if any(_is_safe(f) for f in findings) and here:
                action = self.fix_all_action(checked, positions, document, types.CodeActionKind.QuickFix)
                if action is not None:
                    actions.append(action)
        if _kind_wanted(FIX_ALL_KIND, wanted, explicit_only=True) and any(_is_safe(f) for f in findings):
            action = self.fix_all_action(checked, positions, document, FIX_ALL_KIND)
            if action is not None:
                actions.append(action)
        return actions

    def fix_action(self, finding: Finding, checked: Checked, positions: "Positions",
                   document: TextDocument) -> types.CodeAction | None:
        fix = finding.fix
        if fix is None:
            return None
        new_text = apply_edits(checked.text, fix.edits)
        path = self.path_of(document)
        if not _parses(new_text, path):
            return None  # as --fix: a fix whose result does not parse is not applied
        if fix.obsolete_names:
            new_text = remove_unused_imports(new_text, path, set(fix.obsolete_names))  # as --fix does
        safe = fix.applicability == SAFE
        title = f"{finding.code}: {fix.message}" + ("" if safe else " (unsafe fix: review it)")
        return types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic_of(finding, positions)],
            is_preferred=safe, edit=self.workspace_edit(document, positions, new_text))

    def noqa_action(self, finding: Finding, checked: Checked, positions: "Positions",
                    document: TextDocument) -> types.CodeAction | None:
        new_text = with_noqa(checked.text, finding.noqa_row, finding.code, positions.locator)
        if new_text is None or not self.only_comments_changed(checked, new_text, self.path_of(document)):
            return None  # the line ends inside a string or after a backslash: a comment cannot go there
        return types.CodeAction(
            title=f"Disable {finding.code} for this line", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic_of(finding, positions)], edit=self.workspace_edit(document, positions, new_text))

    def fix_all_action(self, checked: Checked, positions: "Positions", document: TextDocument,
                       kind: str) -> types.CodeAction | None:
        action = types.CodeAction(title="Fix all safe torchpatch findings", kind=kind,
                                  data={"uri": document.uri, "version": document.version})
        if checked.fixed_text is None and self.resolves_edits():
            return action  # the edit is computed only if this action is chosen (codeAction/resolve)
        fixed_text = self.fixed_text(checked, document)
        if fixed_text == checked.text:
            return None
        action.edit = self.workspace_edit(document, positions, fixed_text)
        return action

    def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        document = self.workspace.text_documents.get(data.get("uri", ""))
        if document is None or document.version != data.get("version") or action.edit is not None:
            return action  # the document changed since: no edit rather than a wrong one
        checked = self.check(document)
        fixed_text = self.fixed_text(checked, document)
        action.edit = self.workspace_edit(document, Positions(checked.text, document), fixed_text)
        return action

    def fixed_text(self, checked: Checked, document: TextDocument) -> str:
        """The text after every safe fix, to a fixpoint, exactly as ``torchpatch check --fix`` writes it."""
        if checked.fixed_text is None:
            checked.fixed_text = checked.text
            if checked.result is not None:
                path = self.path_of(document)
                try:
                    fixed = check_text(path, checked.text, settings_for(path), fix=True)
                except SettingsError:
                    fixed = None
                if fixed is not None and fixed.error is None and fixed.fixed_text is not None:
                    checked.fixed_text = fixed.fixed_text
        return checked.fixed_text

    def resolves_edits(self) -> bool:
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document else None
        resolve = code_action.resolve_support if code_action else None
        return bool(resolve and "edit" in resolve.properties)

    def only_comments_changed(self, checked: Checked, new_text: str, path: Path) -> bool:
        """Both texts parse to the same syntax tree (the original's is computed once per version)."""
        try:
            if checked.tree_dump is None:
                checked.tree_dump = ast.dump(parse_text(checked.text, path))
            return ast.dump(parse_text(new_text, path)) == checked.tree_dump
        except ParseFailure:
            return False

    def workspace_edit(self, document: TextDocument, positions: "Positions", new_text: str) -> types.WorkspaceEdit:
        edits = text_edits(positions, new_text)
        capabilities = self.client_capabilities.workspace
        versioned = bool(capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes)
        if versioned:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
        return types.WorkspaceEdit(changes={document.uri: edits})

    # -- hover ------------------------------------------------------------------------------------------------
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        document = self.workspace.get_text_document(params.text_document.uri)
        if not self.is_python(document):
            return None
        checked = self.check(document)
        positions = Positions(checked.text, document)
        offset = positions.offset(params.position)
        here = [f for f in findings_of(checked) if f.start <= offset <= max(f.end, f.start + 1)]
        if not here:
            return None
        parts = []
        for finding in here:
            rule = rule_by_code(finding.code)
            page = render_rule_page(rule) if rule is not None else ""
            parts.append(f"**{finding.code}** {finding.message}\n\n{page}")
        first = here[0]
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                           range=positions.range(first.start, first.end))


# -- conversions at the edge: our offsets and character columns ↔ LSP's 0-based lines and client units ---------

class Positions:
    """Offsets into a document's text ↔ LSP positions in the client's encoding (UTF-16 unless negotiated)."""

    def __init__(self, text: str, document: TextDocument) -> None:
        self.locator = Locator(text)
        self.codec = document.position_codec

    def position(self, offset: int) -> types.Position:
        row, column = self.locator.position(offset)
        line = self.locator.line(row)
        return types.Position(line=row - 1, character=self.codec.client_num_units(line[:column]))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def offset(self, position: types.Position) -> int:
        starts = self.locator.line_starts
        if position.line >= len(starts):
            return len(self.locator.text)
        line = self.locator.line(position.line + 1)
        units = 0
        for index, character in enumerate(line):
            if units >= position.character:
                return starts[position.line] + index
            units += self.codec.client_num_units(character)
        return starts[position.line] + len(line)


def findings_of(checked: Checked) -> list[Finding]:
    return checked.result.findings if checked.result is not None else []


def _is_safe(finding: Finding) -> bool:
    return finding.fix is not None and finding.fix.applicability == SAFE


def severity_of(rule: type[Rule] | None) -> types.DiagnosticSeverity:
    """error: removed APIs and security (TP1xx, TP3xx); warning: deprecations; information: behaviour changes, opt-in."""
    if rule is None:
        return types.DiagnosticSeverity.Warning
    family = rule.code[2:3]
    if rule.opt_in:
        return types.DiagnosticSeverity.Information
    if family in ("1", "3"):
        return types.DiagnosticSeverity.Error
    if family != "4" and rule.kind() in ("deprecated", "removed"):
        return types.DiagnosticSeverity.Warning
    return types.DiagnosticSeverity.Information


def is_obsolete_api(rule: type[Rule] | None) -> bool:
    """The flagged name itself is removed or deprecated (TP1xx, TP2xx, deprecated domain APIs): struck through."""
    if rule is None:
        return False
    family = rule.code[2:3]
    return family in ("1", "2") or (family == "6" and rule.kind() in ("deprecated", "removed"))


def diagnostic_of(finding: Finding, positions: Positions) -> types.Diagnostic:
    rule = rule_by_code(finding.code)
    return types.Diagnostic(
        range=positions.range(finding.start, finding.end), message=finding.message, severity=severity_of(rule),
        code=finding.code, code_description=types.CodeDescription(href=finding.url) if finding.url else None,
        source=SOURCE, tags=[types.DiagnosticTag.Deprecated] if is_obsolete_api(rule) else None,
    )


def unchecked_diagnostic(message: str, where: types.Range) -> types.Diagnostic:
    return types.Diagnostic(range=where, message=message, severity=types.DiagnosticSeverity.Warning,
                            code=UNCHECKED_CODE, source=SOURCE)


def _kind_wanted(kind: str, only: list[str] | None, explicit_only: bool = False) -> bool:
    """CodeActionContext.only: a kind is wanted when it is one of them or below one (``source`` ⊃ ``source.fixAll``).

    ``explicit_only``: only when asked for by kind (source actions: on save, or from a "Source Action" menu).
    """
    if not only:
        return not explicit_only
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def with_noqa(text: str, row: int, code: str, locator: Locator) -> str | None:
    """The text with ``code`` added to the ``# noqa`` of a line (one is appended when the line has none)."""
    if row > len(locator.line_starts):
        return None
    line = locator.line(row)
    start = locator.line_starts[row - 1]
    existing = _NOQA_CODES.search(line)
    if existing is not None:
        insert_at = start + existing.end()
        return text[:insert_at] + f", {code}" + text[insert_at:]
    content = line.rstrip()
    if not content:
        return None
    return text[:start] + content + f"  # noqa: {code}" + text[start + len(line):]


def _parses(text: str, path: Path) -> bool:
    try:
        parse_text(text, path)
    except ParseFailure:
        return False
    return True


def text_edits(positions: Positions, new_text: str) -> list[types.TextEdit]:
    """Line-level edits from the document's text to ``new_text``: what changed, and only that."""
    old_lines = _LINE.findall(positions.locator.text)
    new_lines = _LINE.findall(new_text)
    line_offsets = [0]
    for line in old_lines:
        line_offsets.append(line_offsets[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for operation, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if operation == "equal":
            continue
        edits.append(types.TextEdit(range=positions.range(line_offsets[old_start], line_offsets[old_end]),
                                    new_text="".join(new_lines[new_start:new_end])))
    return edits


# -- the server and its handlers ------------------------------------------------------------------------------

def create_server() -> TorchpatchServer:
    server = TorchpatchServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchpatchServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchpatchServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TorchpatchServer, params: types.DidSaveTextDocumentParams) -> None:
        if is_settings_file(Path(params.text_document.uri)):
            ls.publish_all()  # configuration or pins changed: every open file may read differently
        else:
            ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchpatchServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchpatchServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_settings_file(Path(change.uri)) for change in params.changes):
            ls.publish_all()

    @server.feature(types.INITIALIZED)
    def initialized(ls: TorchpatchServer, params: types.InitializedParams) -> None:
        # Import the rules and the configuration code now, not when the first file is opened.
        all_rules()
        try:
            settings_for(Path(ls.workspace.root_path or ".").absolute() / "untitled.py")
        except SettingsError:
            pass  # reported on each file that it affects
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if watched and watched.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=f"**/{pattern}") for pattern in SETTINGS_FILES]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="torchpatch-settings-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True))
    def code_action(ls: TorchpatchServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(ls: TorchpatchServer, action: types.CodeAction) -> types.CodeAction:
        return ls.resolve_code_action(action)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchpatchServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def serve() -> None:
    create_server().start_io()
