"""`torchpatch server` end to end with pytest-lsp: a real client talks LSP to the server in a subprocess."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402

from torchpatch.frontends.cli import main  # noqa: E402

# 😀 is one code point, two UTF-16 units and four UTF-8 bytes: positions after it show the encoding is right.
CODE = (
    "import torch\n"
    "label = '😀'; state = torch.load('m.pt')\n"
    "amp_ctx = torch.cuda.amp.autocast()\n"  # a safe fix (GradScaler's construction fix is unsafe)
    "y = torch.range(0, 3)\n"
)
CLIENTS = ["visual-studio-code", "neovim@v0.11.0", "emacs"]  # emacs: no codeAction/resolve


def recording_client() -> LanguageClient:
    """The test client, also recording every publishDiagnostics (with its version) and accepting registrations."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish(client_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client_.published.append(params)
        client_.diagnostics[params.uri] = params.diagnostics

    def register_capability(client_: LanguageClient, params: types.RegistrationParams) -> None:
        client_.registrations = [r.method for r in params.registrations]

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   types.CLIENT_REGISTER_CAPABILITY: register_capability})
    return client


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture
def folder(workspace: Path, request) -> Path:
    """A project of its own for each test (the server finds settings per folder), in the one workspace."""
    folder = workspace / request.node.name.replace("[", "-").replace("]", "").replace("@", "-")
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.torchpatch]\nignore = ["TP250"]\n')
    (folder / "model.py").write_text(CODE)
    return folder


# One server per client kind for the whole module: starting one costs seconds.
@pytest_lsp.fixture(scope="module", params=CLIENTS, config=ClientServerConfig(
    server_command=[sys.executable, "-m", "torchpatch", "server"], client_factory=recording_client))
async def client(lsp_client: LanguageClient, request, workspace: Path):
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="demo")]))
    lsp_client.encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    yield
    await lsp_client.shutdown_session()


def units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


async def diagnostics_for(client: LanguageClient, uri: str, version: int | None = None,
                          timeout: float = 20) -> types.PublishDiagnosticsParams:
    async def published():
        while True:
            for params in reversed(client.published):
                if params.uri == uri and (version is None or params.version == version):
                    return params
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(published(), timeout)


def by_code(params: types.PublishDiagnosticsParams) -> dict[str, types.Diagnostic]:
    return {str(d.code): d for d in params.diagnostics}


def apply(text: str, edits: list[types.TextEdit], encoding: str, split=lambda t: t.splitlines(keepends=True)) -> str:
    """Apply LSP text edits as a client does (positions in the negotiated encoding)."""
    lines = split(text)

    def offset(position: types.Position) -> int:
        start = sum(len(line) for line in lines[:position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        column = 0
        while column < len(line) and units(line[:column], encoding) < position.character:
            column += 1
        return start + column

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
        lines = split(text)
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        return list(change.edits)
    return list(edit.changes[uri])


@pytest.mark.asyncio(loop_scope="module")
async def test_open_publishes_diagnostics_with_codes_links_severity_and_tags(client: LanguageClient, folder: Path):
    path = folder / "model.py"
    uri = open_document(client, path, CODE)
    found = by_code(await diagnostics_for(client, uri, version=1))
    assert set(found) == {"TP301", "TP202"}  # TP250 (torch.range) is ignored by the workspace's pyproject.toml
    load, scaler = found["TP301"], found["TP202"]
    line = CODE.splitlines()[1]
    column = line.index("torch.load")
    assert load.range.start == types.Position(line=1, character=units(line[:column], client.encoding))
    assert load.range.end.character - load.range.start.character == len("torch.load('m.pt')")  # the call
    assert load.source == "torchpatch"
    assert load.severity == types.DiagnosticSeverity.Error  # security
    assert load.code_description.href.endswith("/torch-load-without-weights-only.md")
    assert not load.tags
    assert scaler.severity == types.DiagnosticSeverity.Warning  # deprecation
    assert list(scaler.tags) == [types.DiagnosticTag.Deprecated]
    assert "deprecated since PyTorch 2.4" in scaler.message


@pytest.mark.asyncio(loop_scope="module")
async def test_change_is_debounced_and_save_relints(client: LanguageClient, folder: Path):
    path = folder / "model.py"
    uri = open_document(client, path, CODE)
    await diagnostics_for(client, uri, version=1)
    text = CODE
    for version in range(2, 6):  # typing: four changes in quick succession
        text += f"s{version} = torch.cuda.amp.GradScaler()\n"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    final = await diagnostics_for(client, uri, version=5)
    assert [p.version for p in client.published if p.uri == uri] == [1, 5]  # one lint after the pause
    assert sum(1 for d in final.diagnostics if d.code == "TP202") == 5
    watched = client.capabilities.workspace.did_change_watched_files
    if watched and watched.dynamic_registration:  # the server asked to hear about settings files
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in client.registrations
    # A configuration change re-lints open files: TP202 ignored from now on.
    (folder / "pyproject.toml").write_text('[tool.torchpatch]\nignore = ["TP250", "TP202"]\n')
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(folder / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
    count = len(client.published)

    async def relinted() -> types.PublishDiagnosticsParams:
        while True:
            mine = [p for p in client.published[count:] if p.uri == uri]
            if mine:
                return mine[-1]
            await asyncio.sleep(0.02)

    assert set(by_code(await asyncio.wait_for(relinted(), 20))) == {"TP301"}
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    count = len(client.published)
    assert (await asyncio.wait_for(relinted(), 20)).version == 5


async def resolved(client: LanguageClient, action: types.CodeAction) -> types.CodeAction:
    """The action with its edit: clients that support codeAction/resolve get the costly fix-all edit lazily."""
    if action.edit is None:
        assert client.capabilities.text_document.code_action.resolve_support
        action = await client.code_action_resolve_async(action)
    return action


def fix_all_request(uri: str) -> types.CodeActionParams:
    start = types.Position(line=0, character=0)
    return types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                  range=types.Range(start=start, end=start),
                                  context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]))


@pytest.mark.asyncio(loop_scope="module")
async def test_code_actions_fix_fix_all_and_noqa(client: LanguageClient, folder: Path):
    path = folder / "model.py"
    uri = open_document(client, path, CODE)
    found = by_code(await diagnostics_for(client, uri, version=1))
    scaler = found["TP202"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=scaler.range,
        context=types.CodeActionContext(diagnostics=[scaler])))
    titles = [action.title for action in actions]
    assert titles == [
        'TP202: Replace with `torch.amp.autocast("cuda", ...)`',
        "Disable TP202 for this line",
        "Fix all safe torchpatch findings",
    ], titles
    fix, noqa, fix_all = actions
    assert (fix_all.edit is None) == bool(client.capabilities.text_document.code_action.resolve_support)
    fix_all = await resolved(client, fix_all)
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    fixed = apply(CODE, edits_of(fix, uri), client.encoding)
    assert fixed == CODE.replace("torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda", dtype=torch.float16)')
    assert apply(CODE, edits_of(noqa, uri), client.encoding) == CODE.replace(
        "autocast()\n", "autocast()  # noqa: TP202\n")
    # The same text as `torchpatch check --fix` writes.
    path.write_text(CODE)
    assert main(["check", "--fix", "--quiet", str(path)]) == 1
    assert apply(CODE, edits_of(fix_all, uri), client.encoding) == path.read_text()
    # source.fixAll (what editors run on save) only when asked for by kind.
    (source_fix_all,) = await client.text_document_code_action_async(fix_all_request(uri))
    assert source_fix_all.kind == "source.fixAll.torchpatch"
    source_fix_all = await resolved(client, source_fix_all)
    assert edits_of(source_fix_all, uri) == edits_of(fix_all, uri)

    # The edit applied, the client sends the new text: the finding is gone.
    stale = types.CodeAction(title=fix_all.title, kind=fix_all.kind, data={"uri": uri, "version": 1})
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    assert set(by_code(await diagnostics_for(client, uri, version=2))) == {"TP301"}
    if client.capabilities.text_document.code_action.resolve_support:
        # Resolving an action made for version 1 now that the text is version 2: no edit rather than a wrong one.
        assert (await client.code_action_resolve_async(stale)).edit is None

    # An unsafe fix is offered, not preferred, and says so.
    load = found["TP301"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=load.range,
        context=types.CodeActionContext(diagnostics=[load])))
    unsafe = [a for a in actions if a.title.startswith("TP301")]
    assert unsafe and "unsafe" in unsafe[0].title and not unsafe[0].is_preferred

    actions = await client.text_document_code_action_async(fix_all_request(uri))
    assert not actions  # nothing safe left to fix in version 2


@pytest.mark.asyncio(loop_scope="module")
async def test_noqa_is_not_offered_where_a_comment_would_change_the_code(client: LanguageClient, folder: Path):
    text = 'import torch\nstate = torch.load(\'m.pt\'); doc = """\nsome text\n"""\nx = torch.load(p)  # noqa: E501\n'
    uri = open_document(client, folder / "strings.py", text)
    published = await diagnostics_for(client, uri, version=1)
    first, second = sorted(published.diagnostics, key=lambda d: d.range.start.line)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=first.range,
        context=types.CodeActionContext(diagnostics=[first])))
    assert not any(a.title.startswith("Disable") for a in actions)  # the line ends inside a string
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=second.range,
        context=types.CodeActionContext(diagnostics=[second])))
    (noqa,) = [a for a in actions if a.title.startswith("Disable")]
    assert apply(text, edits_of(noqa, uri), client.encoding).endswith("x = torch.load(p)  # noqa: E501, TP301\n")


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_a_finding_shows_the_rule_page(client: LanguageClient, folder: Path):
    uri = open_document(client, folder / "model.py", CODE)
    scaler = by_code(await diagnostics_for(client, uri, version=1))["TP202"]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=scaler.range.start))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("**TP202** `torch.cuda.amp.autocast` is deprecated")
    assert "# cuda-amp-api (TP202)" in hover.contents.value and "## Fix safety" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=2)))
    assert nothing is None


@pytest.mark.asyncio(loop_scope="module")
async def test_syntax_errors_and_bad_configuration_are_reported_not_crashed_on(client: LanguageClient, folder: Path):
    uri = open_document(client, folder / "broken.py", "import torch\nx = torch.load(\n")
    (diagnostic,) = (await diagnostics_for(client, uri, version=1)).diagnostics
    assert diagnostic.code == "TP001" and "syntax error" in diagnostic.message
    (folder / "pyproject.toml").write_text('[tool.torchpatch]\ntarget-torch = "banana"\n')
    uri = open_document(client, folder / "model.py", CODE)
    (diagnostic,) = (await diagnostics_for(client, uri, version=1)).diagnostics
    assert diagnostic.code == "TP001" and "target-torch" in diagnostic.message


def test_server_without_pygls_is_a_one_line_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    monkeypatch.delitem(sys.modules, "torchpatch.frontends.lsp", raising=False)
    assert main(["server"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "pip install 'torchpatch[lsp] @ git+https://github.com/torchpatch/torchpatch'" in error


# -- the conversions at the edge, on texts an editor really sends -----------------------------------------------

EDGE_TEXTS = {
    "crlf": "import torch\r\nx = torch.cuda.amp.autocast()\r\n",
    "cr-only": "import torch\rx = torch.cuda.amp.autocast()\r",
    "form-feed": "import torch\n\x0c\nx = torch.cuda.amp.autocast()\n",  # one line for LSP, two for str.splitlines
    "astral": "import torch\nx = ('😀😀', torch.cuda.amp.autocast())\n",
    "no-final-newline": "import torch\nx = torch.cuda.amp.autocast()",
}


@pytest.mark.parametrize("encoding", [types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16,
                                      types.PositionEncodingKind.Utf32])
@pytest.mark.parametrize("name", list(EDGE_TEXTS))
def test_positions_and_edits_round_trip(name, encoding, tmp_path):
    from pygls.workspace import PositionCodec, TextDocument

    from torchpatch.frontends import lsp
    from torchpatch.frontends.buffer import check_text, settings_for

    text = EDGE_TEXTS[name]
    path = tmp_path / "m.py"
    document = TextDocument(path.as_uri(), text, version=1, language_id="python",
                            position_codec=PositionCodec(encoding))
    positions = lsp.Positions(text, document)
    for offset in range(len(text) + 1):
        if text[offset - 1:offset + 1] == "\r\n":
            continue  # between the two characters of one line break: no position there
        assert positions.offset(positions.position(offset)) == offset
    (finding,) = check_text(path, text, settings_for(path)).findings
    start = positions.position(finding.start)
    assert start.line == text.count("\n", 0, finding.start) + text.count("\r", 0, finding.start) - text.count(
        "\r\n", 0, finding.start)  # LSP's lines: \f is not a line break
    assert text[positions.offset(start):].startswith("torch.cuda.amp.autocast")
    fixed = check_text(path, text, settings_for(path), fix=True).fixed_text
    assert fixed != text
    assert apply(text, lsp.text_edits(positions, fixed), encoding, lsp._LINE.findall) == fixed


@pytest.mark.asyncio(loop_scope="module")
async def test_unsaved_buffers_are_checked_and_closing_clears_the_diagnostics(client: LanguageClient, folder: Path):
    uri = f"untitled:Untitled-{folder.name}"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=CODE)))
    assert {"TP301", "TP202"} <= set(by_code(await diagnostics_for(client, uri, version=1)))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))

    async def cleared():
        while client.published[-1].uri != uri or client.published[-1].diagnostics:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(cleared(), 20)
    # A notebook cell sent as a text document is not checked alone (its imports live in other cells).
    cell = f"vscode-notebook-cell:{(folder / 'n.ipynb').as_posix()}#W0sZmlsZQ%3D%3D"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=cell, language_id="python", version=1, text=CODE)))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=cell), position=types.Position(line=2, character=12)))
    assert hover is None and cell not in client.diagnostics
