"""``torchpatch mcp``: the checker and the knowledge as read-only MCP tools over stdio (extra ``[mcp]``)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import logging
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Literal, Optional

from torchpatch import __version__, install_hint
from torchpatch.versions import KNOWN_RELEASES, NEWEST_KNOWN, OLDEST_KNOWN, Version

HELP = "Serve torchpatch to coding agents over MCP (stdio): check and fix code, explain rules, list changes, audit, plan installs."

INSTRUCTIONS = (
    f"torchpatch knows every PyTorch change from {OLDEST_KNOWN} to {NEWEST_KNOWN}, checked against the real wheels. "
    "Before writing or upgrading PyTorch code, call check_code on it (and fix_code for the rewrite); ask "
    "search_knowledge what replaced an API; explain_rule explains a finding's code; list_changes gives what changed "
    "between two releases; audit_checkpoint says whether a checkpoint loads with weights_only=True without "
    "unpickling it; plan_install picks a torch build for a GPU, driver and Python. Every tool is read-only."
)

Area = Literal["serialization", "compile", "export", "distributed", "platforms", "core"]

#: One CLI command at a time: audit and doctor print their JSON, which is captured in-process.
_CLI_LOCK = threading.Lock()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-level", choices=("DEBUG", "INFO", "WARNING", "ERROR"), default="WARNING",
                        help="log level of the server's messages on stderr (stdout carries only the protocol)")


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    try:
        server = build_server(log_level=args.log_level)
    except ImportError as error:
        raise UsageError(f"the MCP server needs the official MCP SDK: {install_hint('mcp')} ({error})") from None
    logging.basicConfig(stream=sys.stderr, level=args.log_level)
    server.run("stdio")
    return 0


class ToolFailure(Exception):
    """A bad argument: returned to the client as a tool error, in one line."""


# -- the tools, as plain functions (their signatures become the tools' schemas) ---------------------
def _version(value: Optional[str], what: str) -> Optional[Version]:
    if value is None:
        return None
    try:
        version = Version.parse(value)
    except ValueError as error:
        raise ToolFailure(f"{what}: {error}") from None
    if version not in KNOWN_RELEASES:
        raise ToolFailure(f"{what} {value}: torchpatch knows PyTorch {OLDEST_KNOWN}–{NEWEST_KNOWN}")
    return version


def _settings(target_torch: Optional[str], min_torch: Optional[str], select: Optional[list[str]]):
    from torchpatch.engine.settings import SelectionError, Settings

    settings = Settings()
    target = _version(target_torch, "target_torch")
    minimum = _version(min_torch, "min_torch")
    if target is not None:
        settings.target = target
    if minimum is not None:
        settings.min_torch = minimum
    if select:
        settings.select = list(select)
    try:
        settings.validate()
    except SelectionError as error:
        raise ToolFailure(str(error)) from None
    return settings


def _check_text(source: str, filename: str, settings, fix: bool, unsafe_fixes: bool):
    """The linter on text: a file in a private temporary folder, so noqa, fixes and notebooks behave as on disk."""
    from torchpatch.engine.linter import check_file

    name = Path(filename).name or "snippet.py"
    if not name.endswith((".py", ".pyi")):
        raise ToolFailure(f"filename {filename!r}: check_code takes Python source (.py or .pyi)")
    with tempfile.TemporaryDirectory(prefix="torchpatch-mcp-") as folder:
        path = Path(folder) / name
        path.write_text(source, encoding="utf-8", newline="")
        result = check_file(path, settings, fix=fix, unsafe_fixes=unsafe_fixes)
        entries = _findings_json(result, filename)
    return result, entries


def _findings_json(result, filename: str) -> list[dict[str, Any]]:
    from torchpatch.output.formats import error_json, finding_json

    entries = [error_json(result)] if result.error is not None else []
    entries += [finding_json(finding, result) for finding in result.findings]
    for entry in entries:
        entry["filename"] = filename
    return entries


def check_code(source: str, filename: str = "snippet.py", target_torch: Optional[str] = None,
               min_torch: Optional[str] = None, select: Optional[list[str]] = None) -> dict[str, Any]:
    """Check Python source for outdated and unsafe PyTorch usage.

    Returns the findings as `torchpatch check --output-format json` writes them (code, name, message, url,
    location, end_location, fix with applicability and edits), for the target release (default the newest)
    and the oldest release the code must still run on (min_torch, default 2.4; it decides which fixes are safe).
    select takes rule codes, prefixes, names or ALL.
    """
    settings = _settings(target_torch, min_torch, select)
    _, entries = _check_text(source, filename, settings, fix=False, unsafe_fixes=False)
    return {"findings": entries, "target_torch": str(settings.target), "min_torch": str(settings.min_torch)}


def fix_code(source: str, unsafe: bool = False, filename: str = "snippet.py", target_torch: Optional[str] = None,
             min_torch: Optional[str] = None, select: Optional[list[str]] = None) -> dict[str, Any]:
    """Apply torchpatch's fixes to Python source and return the fixed source (nothing is written).

    Safe fixes keep behaviour on every release from min_torch to target_torch; unsafe=True also applies the
    fixes that need review. Returns the fixed source, a unified diff, how many fixes were applied per rule,
    and the findings that remain.
    """
    settings = _settings(target_torch, min_torch, select)
    result, remaining = _check_text(source, filename, settings, fix=True, unsafe_fixes=unsafe)
    fixed = result.fixed_text if result.error is None and result.fixed_text is not None else source
    diff = "".join(difflib.unified_diff(source.splitlines(keepends=True), fixed.splitlines(keepends=True),
                                        f"a/{filename}", f"b/{filename}"))
    return {"fixed_source": fixed, "changed": fixed != source, "diff": diff, "applied": result.fixed_count,
            "applied_by_rule": dict(sorted(result.fixed_codes.items())), "remaining": remaining,
            "target_torch": str(settings.target), "min_torch": str(settings.min_torch)}


def explain_rule(code_or_name: str) -> dict[str, Any]:
    """Explain a rule by its code (TP301), name (torch-load-without-weights-only) or TorchFix code (TOR102).

    Returns the rule's metadata (versions, fix safety, what it watches; a table rule with its API rows) and its
    page in Markdown, the same as `torchpatch rule CODE`.
    """
    from torchpatch.docs import render_rule_page
    from torchpatch.knowledge import rule_metadata
    from torchpatch.rules import rule_by_code_or_name

    rule = rule_by_code_or_name(code_or_name)
    if rule is None:
        raise ToolFailure(f"unknown rule {code_or_name!r}: search_knowledge finds rules by API name")
    return {**rule_metadata(rule), "page": render_rule_page(rule)}


def search_knowledge(query: str, limit: int = 10) -> dict[str, Any]:
    """Find rules and API-table rows whose names, old or new APIs or messages match the query.

    Ask with API names or words, e.g. "torch.cuda.amp", "what replaced export_for_training", "weights_only".
    Returns the best matches first: rules with their metadata, API rows with old, new, versions and fix.
    """
    from torchpatch.knowledge import search

    if not query.strip():
        raise ToolFailure("query is empty")
    results = search(query, limit=max(1, min(limit, 50)))
    return {"query": query, "results": results}


def list_changes(from_version: str, to_version: str, area: Optional[Area] = None) -> dict[str, Any]:
    """Every change PyTorch made after from_version up to and including to_version.

    From the rules, the API table and the platform facts (Python range, CUDA builds, GPU architectures, ABI,
    advisories); each with its release, what to do and whether torchpatch fixes it (safe/unsafe/manual/not detected).
    area narrows it to serialization, compile, export, distributed, platforms or core.
    """
    from torchpatch.knowledge import changes_between

    start = _version(from_version, "from_version")
    target = _version(to_version, "to_version")
    assert start is not None and target is not None
    if start >= target:
        raise ToolFailure(f"from_version {start} must be older than to_version {target}")
    changes = changes_between(start, target, area)
    return {"from": str(start), "to": str(target), "area": area, "count": len(changes),
            "changes": [change.as_json() for change in changes]}


def audit_checkpoint(path: str, torch_version: Optional[str] = None) -> dict[str, Any]:
    """Audit a checkpoint without loading it: would torch.load(weights_only=True) accept it, and is it malicious?

    path must lie under the server's working directory. Returns torchpatch audit's JSON report.
    """
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise ToolFailure(f"{path}: only paths under the server's working directory ({root}) can be audited")
    if not target.exists():
        raise ToolFailure(f"{path}: no such file or folder")
    argv = ["audit", "--output-format", "json", str(target)]
    if torch_version:
        argv += ["--torch-version", torch_version]
    return {"reports": _cli_json(argv)}


def plan_install(gpu: list[str], driver: Optional[str] = None, python: Optional[str] = None,
                 target_torch: Optional[str] = None) -> dict[str, Any]:
    """Plan a PyTorch install for a machine you describe: which torch build fits its GPUs, driver and Python.

    gpu: compute capabilities such as "sm_70" or "8.6" ("none" for CPU only); driver: the NVIDIA driver version
    (e.g. "535.104.05"); python: e.g. "3.12"; target_torch: the release you want (default: the best that fits).
    Returns torchpatch doctor's JSON answer, with the exact pip command.
    """
    argv = ["doctor", "--output-format", "json"]
    for item in gpu or ["none"]:
        argv += ["--gpu", item]
    if driver:
        argv += ["--driver", driver]
    if python:
        argv += ["--python", python]
    if target_torch:
        argv += ["--target-torch", target_torch]
    return _cli_json(argv)


def _cli_json(argv: list[str]) -> Any:
    """Run a torchpatch command in-process and return its JSON; a usage error becomes a tool error."""
    from torchpatch.frontends.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _CLI_LOCK, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code == 2 or not out.getvalue().strip():
        message = err.getvalue().strip().splitlines()
        raise ToolFailure(message[-1] if message else f"torchpatch {argv[0]} failed (exit {code})")
    return json.loads(out.getvalue())


TOOLS = (check_code, fix_code, explain_rule, search_knowledge, list_changes, audit_checkpoint, plan_install)


def build_server(log_level: str = "WARNING"):
    """The MCPServer with every tool registered read-only; import errors mean the [mcp] extra is missing."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations

    server = MCPServer(name="torchpatch", version=__version__, instructions=INSTRUCTIONS, log_level=log_level)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    for tool in TOOLS:
        server.add_tool(_as_tool_error(tool, ToolError), name=tool.__name__, annotations=read_only,
                        structured_output=True)
    return server


def _as_tool_error(function, tool_error: type[Exception]):
    """The same function (signature and docstring kept for the schema), with ToolFailure as the SDK's ToolError."""
    import functools

    @functools.wraps(function)
    def tool(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ToolFailure as failure:
            raise tool_error(str(failure)) from None

    return tool
