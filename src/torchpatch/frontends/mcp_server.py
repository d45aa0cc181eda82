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
from typing import Annotated, Any, Literal, Optional, Union

try:
    from pydantic import Field
except ImportError:  # no mcp extra (which brings pydantic): `run` says how to install it, --help still works
    def Field(**_description):  # noqa: N802 - stands in for pydantic.Field in the annotations below
        return None

from torchpatch import __version__, install_hint
from torchpatch.versions import KNOWN_RELEASES, NEWEST_KNOWN, OLDEST_KNOWN, Version

#: The most characters one answer's data takes (its JSON): a context window is shared with everything else.
ANSWER_BUDGET = 8_000

HELP = "Serve torchpatch to coding agents over MCP (stdio): check and fix code, explain rules, list changes, audit, plan installs."

INSTRUCTIONS = (
    f"torchpatch knows every PyTorch change from {OLDEST_KNOWN} to {NEWEST_KNOWN}, checked against the real wheels. "
    "Before writing or upgrading PyTorch code, call check_code on it (and fix_code for the rewrite); ask "
    "search_knowledge what replaced an API; explain_rule explains a finding's code; list_changes gives what changed "
    "between two releases; audit_checkpoint says whether a checkpoint loads with weights_only=True without "
    "unpickling it; plan_install picks a torch build for a GPU (a name such as \"H100\" or \"sm_90\"), driver and Python. "
    f"Every tool is read-only; every answer fits {ANSWER_BUDGET:,} characters, and a long list says how many items "
    "it left out and the offset that pages on."
)

Area = Literal["serialization", "compile", "export", "distributed", "platforms", "core"]
Kind = Literal["rule", "api-change", "platform"]

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


# -- parameters, as agents send them ----------------------------------------------------------------
Names = Union[str, list[str]]
Release = Annotated[Optional[str], Field(description='a PyTorch release "X.Y" (2.4 to 2.15), e.g. "2.11"')]
Source = Annotated[str, Field(description="the Python source to check, as text")]
Filename = Annotated[str, Field(description="the file's name (decides .py or .pyi, and per-file settings); "
                                            "nothing is read from disk")]
Select = Annotated[Optional[Names], Field(description='rules to run instead of the defaults: codes ("TP301"), '
                                                      'prefixes ("TP3"), names, or "ALL"; one string or a list')]
Limit = Annotated[int, Field(description="how many items to return at most (1-50)")]
Offset = Annotated[int, Field(description="how many items to skip: the next_offset of the previous answer")]


def _names(value: Optional[Names], what: str) -> list[str]:
    """A list from a list, one string, or a comma-separated string."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    names = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    if not names and items:
        raise ToolFailure(f"{what} is empty: give at least one value")
    return names


def _page(items: list, limit: int, offset: int) -> tuple[list, dict[str, Any]]:
    """One page of a list, and what an agent needs to know about the rest."""
    if not 1 <= limit <= 50:
        raise ToolFailure(f"limit {limit}: give 1 to 50")
    if offset < 0:
        raise ToolFailure(f"offset {offset}: give 0 or more")
    page = items[offset:offset + limit]
    return page, _paging(len(items), offset, len(page))


def _paging(total: int, offset: int, shown: int) -> dict[str, Any]:
    rest = max(0, total - offset - shown)
    return {"total": total, "offset": offset, "returned": shown, "left_out": rest,
            "next_offset": offset + shown if rest else None}


def _fit(data: dict[str, Any], key: str) -> dict[str, Any]:
    """Drop items from the end of ``data[key]`` until the answer fits the budget; the paging says so."""
    items = data[key]
    while len(items) > 1 and _size(data) > ANSWER_BUDGET:
        items.pop()
        paging = data.get("paging")
        if paging is not None:
            data["paging"] = _paging(paging["total"], paging["offset"], len(items))
    return data


def _size(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False))


def _shorten(names: list[str], what: str, how: str, keep: int = 8) -> dict[str, Any]:
    """A long name list as its count, its first few and how to get them all."""
    if len(names) <= keep:
        return {"count": len(names), "names": names}
    return {"count": len(names), "first": names[:keep], "left_out": len(names) - keep, "all": how}


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


def _settings(target_torch: Optional[str], min_torch: Optional[str], select: Optional[Names]):
    from torchpatch.engine.settings import SelectionError, Settings

    settings = Settings()
    target = _version(target_torch, "target_torch")
    minimum = _version(min_torch, "min_torch")
    if target is not None:
        settings.target = target
    if minimum is not None:
        settings.min_torch = minimum
    selectors = _names(select, "select")
    if selectors:
        settings.select = selectors
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


def _opt_in_findings(source: str, filename: str, settings) -> dict[str, Any]:
    """The opt-in rules (off by default) that would also fire, so an agent can ask for them with select."""
    import copy
    from collections import Counter

    from torchpatch.rules import all_rules

    opt_in = [rule.code for rule in all_rules() if rule.opt_in and rule.code not in settings.enabled_codes()]
    if not opt_in:
        return {"count": 0, "codes": {}}
    extended = copy.copy(settings)
    extended.__dict__.pop("_enabled_codes", None)
    extended.select = None
    extended.extend_select = opt_in
    extended.ignore = []
    _, entries = _check_text(source, filename, extended, fix=False, unsafe_fixes=False)
    codes = Counter(entry["code"] for entry in entries if entry["code"] in opt_in)
    answer: dict[str, Any] = {"count": sum(codes.values()), "codes": dict(sorted(codes.items()))}
    if codes:
        answer["how"] = f"check_code(..., select=[\"ALL\"]) or select={sorted(codes)} reports them"
    return answer


def check_code(source: Source, filename: Filename = "snippet.py", target_torch: Release = None,
               min_torch: Release = None, select: Select = None, limit: Limit = 50,
               offset: Offset = 0) -> dict[str, Any]:
    """Check Python source for outdated and unsafe PyTorch usage.

    Returns the findings as `torchpatch check --output-format json` writes them (code, name, message, url,
    location, end_location, fix with applicability and edits), for the target release (default the newest)
    and the oldest release the code must still run on (min_torch, default 2.4; it decides which fixes are safe).
    opt_in says which opt-in rules (off by default) would also fire; select=["ALL"] runs them.
    """
    settings = _settings(target_torch, min_torch, select)
    _, entries = _check_text(source, filename, settings, fix=False, unsafe_fixes=False)
    page, paging = _page(entries, limit, offset)
    data = {"findings": page, "paging": paging, "target_torch": str(settings.target),
            "min_torch": str(settings.min_torch), "opt_in": _opt_in_findings(source, filename, settings)}
    return _fit(data, "findings")


def fix_code(source: Source, unsafe: Annotated[bool, Field(description="also apply the unsafe fixes (they need "
                                                                      "review: behaviour can differ)")] = False,
             filename: Filename = "snippet.py", target_torch: Release = None, min_torch: Release = None,
             select: Select = None,
             include: Annotated[Literal["both", "source", "diff"], Field(
                 description="what to return: the fixed source, the unified diff, or both (both falls back to the "
                             "diff alone when the two would not fit the answer)")] = "both",
             offset: Annotated[int, Field(description="for a long answer: the character of the diff or fixed "
                                                      "source to start at (next_offset of the previous answer)")] = 0,
             ) -> dict[str, Any]:
    """Apply torchpatch's fixes to Python source and return the fixed source (nothing is written).

    Safe fixes keep behaviour on every release from min_torch to target_torch; unsafe=True also applies the
    fixes that need review. Returns the fixed source and/or a unified diff (in pieces when long), how many
    fixes were applied per rule, and the findings that remain.
    """
    settings = _settings(target_torch, min_torch, select)
    result, remaining = _check_text(source, filename, settings, fix=True, unsafe_fixes=unsafe)
    fixed = result.fixed_text if result.error is None and result.fixed_text is not None else source
    diff = "".join(difflib.unified_diff(source.splitlines(keepends=True), fixed.splitlines(keepends=True),
                                        f"a/{filename}", f"b/{filename}"))
    data: dict[str, Any] = {"changed": fixed != source, "applied": result.fixed_count,
                            "applied_by_rule": dict(sorted(result.fixed_codes.items())),
                            "remaining": remaining, "paging": _paging(len(remaining), 0, len(remaining)),
                            "target_torch": str(settings.target), "min_torch": str(settings.min_torch)}
    _fit(data, "remaining")
    whole = {**data, "fixed_source": fixed, "diff": diff}
    if include == "both" and offset == 0 and _size(whole) <= ANSWER_BUDGET:
        return whole
    shown, text = ("fixed_source", fixed) if include == "source" else ("diff", diff)
    if include == "both":
        data["fixed_source_omitted"] = "too long beside the diff: call again with include=\"source\""
    data[shown], data["text_paging"] = _piece(text, offset, ANSWER_BUDGET - _size(data) - 200)
    return data


def _piece(text: str, offset: int, room: int) -> tuple[str, dict[str, Any]]:
    """The longest piece of text from offset whose JSON fits in room characters, cut at a line end when possible."""
    if offset < 0 or (offset and offset >= len(text)):
        raise ToolFailure(f"offset {offset}: the text has {len(text)} characters")
    end = len(text)
    while end > offset and len(json.dumps(text[offset:end], ensure_ascii=False)) > room:
        end = offset + (end - offset) * 3 // 4
    if end < len(text):
        line_end = text.rfind("\n", offset, end)
        if line_end > offset:
            end = line_end + 1
    return text[offset:end], {"total_characters": len(text), "offset": offset,
                              "next_offset": end if end < len(text) else None}


def explain_rule(code_or_name: Annotated[str, Field(description='a rule code ("TP301"), name '
                                                                '("torch-load-without-weights-only") or TorchFix '
                                                                'code ("TOR102")')],
                 detail: Annotated[Literal["summary", "full", "rows"], Field(
                     description="summary: versions, fix safety, one outdated/fixed example pair; full: the whole "
                                 "page in Markdown (paged by offset); rows: a table rule's API rows (paged)")] = "summary",
                 limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
    """Explain a rule by its code (TP301), name (torch-load-without-weights-only) or TorchFix code (TOR102).

    By default: what it finds, its versions, its fix safety and one example pair (outdated → fixed or what to
    write). detail="full" returns the page `torchpatch rule CODE` prints, in pieces (offset counts characters);
    detail="rows" pages through the API rows of a table rule (TP101, TP201).
    """
    from torchpatch.docs import render_rule_page
    from torchpatch.knowledge import example_pair, row_json, rule_metadata, rule_summary_json, table_rows, valid_example
    from torchpatch.rules import rule_by_code_or_name

    rule = rule_by_code_or_name(code_or_name)
    if rule is None:
        raise ToolFailure(f"unknown rule {code_or_name!r}: search_knowledge finds rules by API name or words")
    rows = table_rows(rule)
    if detail == "rows":
        if not rows:
            raise ToolFailure(f"{rule.code} is not a table rule: it has no API rows (use detail=\"full\")")
        page, paging = _page([row_json(row) for row in rows], limit, offset)
        return _fit({"code": rule.code, "name": rule.name, "rows": page, "paging": paging}, "rows")
    if detail == "full":
        piece, paging = _piece(render_rule_page(rule), offset, ANSWER_BUDGET - 400)
        return {"code": rule.code, "name": rule.name, "page": piece, "paging": paging}
    metadata = rule_metadata(rule, with_rows=False)
    old, new = example_pair(rule)
    data = {**rule_summary_json(rule), "fix_safety_note": rule.fix_safety_note,
            "references": metadata["references"][:3], "torchfix_codes": metadata["torchfix_codes"],
            "example": {"outdated": old, "fixed": new, "write_instead": None if new else valid_example(rule)}}
    watched = sorted(rule.calls | rule.references_to | rule.methods | rule.attributes_assigned)
    data["watches"] = _shorten(watched, "names", f'explain_rule("{rule.code}", detail="full")')
    if rows:
        data["rows"] = {"count": len(rows), "all": f'explain_rule("{rule.code}", detail="rows", offset=0)'}
    data["more"] = f'explain_rule("{rule.code}", detail="full") gives the whole page'
    return data


def search_knowledge(query: Annotated[str, Field(description='words or API names, e.g. "weights_only default", '
                                                            '"torch.cuda.amp", "sdp_kernel"')],
                     limit: Limit = 10, offset: Offset = 0,
                     kind: Annotated[Optional[Kind], Field(description="only rules, API-table rows or platform "
                                                                       "facts")] = None,
                     area: Annotated[Optional[Area], Field(description="only this area")] = None) -> dict[str, Any]:
    """Find the rules, API-table rows and platform facts that answer a question, best first (BM25 ranking).

    Ask with API names or words, e.g. "torch.cuda.amp", "what replaced export_for_training", "weights_only".
    For a question that names an API, the rule that finds it in code ranks ahead of platform facts.
    Each result is a summary; explain_rule(code) explains a rule.
    """
    from torchpatch.knowledge import ranked

    if not query.strip():
        raise ToolFailure("query is empty: ask with API names or words, e.g. \"weights_only default\"")
    results = [{**entry.answer, "score": round(score, 2)} for score, entry in ranked(query, kind, area)]
    page, paging = _page(results, limit, offset)
    return _fit({"query": query, "results": page, "paging": paging}, "results")


def list_changes(from_version: Annotated[str, Field(description='the release you are on, e.g. "2.6"')],
                 to_version: Annotated[str, Field(description='the release you move to, e.g. "2.11"')],
                 area: Annotated[Optional[Area], Field(description="only this area")] = None,
                 kind: Annotated[Optional[Kind], Field(description="only rules, API-table rows or platform "
                                                                   "facts")] = None,
                 limit: Annotated[int, Field(description="how many changes to return at most (1-50)")] = 25,
                 offset: Offset = 0) -> dict[str, Any]:
    """What PyTorch changed after from_version up to and including to_version, a page at a time.

    From the rules, the API table and the platform facts (Python range, CUDA builds, GPU architectures, ABI,
    advisories); each with its release, what to do and how torchpatch handles it (safe fix, unsafe fix,
    manual, not detected). counts gives the whole window by area and kind; page on with offset.
    """
    from collections import Counter

    from torchpatch.knowledge import change_summary_json, changes_between

    start = _version(from_version, "from_version")
    target = _version(to_version, "to_version")
    assert start is not None and target is not None
    if start >= target:
        raise ToolFailure(f"from_version {start} must be older than to_version {target}")
    window = changes_between(start, target, area)
    kinds = {"rule": "rule", "api-table": "api-change", "platform": "platform"}
    if kind is not None:
        window = [change for change in window if kinds[change.source] == kind]
    page, paging = _page(window, limit, offset)
    data = {"from": str(start), "to": str(target), "area": area, "kind": kind,
            "counts": {"by_area": dict(Counter(change.area for change in window)),
                       "by_kind": dict(Counter(kinds[change.source] for change in window)),
                       "by_handling": dict(Counter(change.handling() for change in window))},
            "changes": [change_summary_json(change) for change in page], "paging": paging}
    return _fit(data, "changes")


def audit_checkpoint(path: Annotated[str, Field(description="a checkpoint file or folder, relative to the server's "
                                                            "working directory")],
                     torch_version: Release = None, limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
    """Audit a checkpoint without loading it: would torch.load(weights_only=True) accept it, and is it malicious?

    path must lie under the server's working directory; a folder is audited file by file (paged).
    Returns torchpatch audit's JSON report per file.
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
    reports = _cli_json(argv)
    page, paging = _page(reports if isinstance(reports, list) else [reports], limit, offset)
    return _fit({"reports": page, "paging": paging}, "reports")


def gpu_architectures(names: list[str]) -> tuple[list[str], list[dict[str, str]]]:
    """GPU names as agents write them ("V100", "RTX 4090", "sm_90", "8.6") → compute capabilities for doctor."""
    from torchpatch import platform_facts

    caps: list[str] = []
    named: list[dict[str, str]] = []
    for name in names:
        if name.lower() in ("none", "cpu"):
            continue
        try:
            caps.append(platform_facts.capability_text(platform_facts.capability(name)))
            continue
        except ValueError:
            pass
        row = platform_facts.gpu_by_name(name)
        if row is None:
            known = ", ".join(sorted({row.names[0] for row in platform_facts.gpu_names()})[:12])
            raise ToolFailure(f"gpu {name!r} is not a GPU name torchpatch knows nor a GPU architecture: give a "
                              f"compute capability (sm_86 or 8.6, from `nvidia-smi --query-gpu=compute_cap "
                              f"--format=csv`) or a name such as {known}")
        if row.arch is None:
            raise ToolFailure(f"gpu {name!r} is an AMD {row.name} ({row.gfx}): plan_install plans NVIDIA CUDA "
                              f"builds; install a ROCm build with `pip install torch --index-url "
                              f"https://download.pytorch.org/whl/rocmX.Y` for a ROCm release that supports {row.gfx}")
        cap = platform_facts.capability_text(row.arch)
        caps.append(cap)
        named.append({"gpu": name, "model": row.name, "arch": cap})
    return caps, named


def plan_install(gpu: Annotated[Names, Field(description='the GPUs: names ("V100", "H100", "RTX 4090", "A10G"), '
                                                         'compute capabilities ("sm_70", "8.6") or "none" for CPU '
                                                         'only; one string or a list')],
                 driver: Annotated[Optional[str], Field(description='the NVIDIA driver version, e.g. "535.104.05" '
                                                                    'or "535"')] = None,
                 python: Annotated[Optional[str], Field(description='the CPython version, e.g. "3.12"')] = None,
                 target_torch: Release = None) -> dict[str, Any]:
    """Plan a PyTorch install for a machine you describe: which torch build fits its GPUs, driver and Python.

    gpu takes GPU names or compute capabilities; driver the NVIDIA driver version; python e.g. "3.12";
    target_torch the release you want (default: the best that fits). Returns torchpatch doctor's JSON answer,
    with the exact pip command.
    """
    caps, named = gpu_architectures(_names(gpu, "gpu") or ["none"])
    argv = ["doctor", "--output-format", "json"]
    for item in caps or ["none"]:
        argv += ["--gpu", item]
    if driver:
        argv += ["--driver", driver]
    if python:
        argv += ["--python", python]
    if target_torch:
        argv += ["--target-torch", target_torch]
    data = _cli_json(argv)
    if named:
        data["gpu_names"] = named
    return data


# -- the short text an agent reads beside the structured answer -------------------------------------
def _paged(data: dict[str, Any], what: str) -> str:
    paging = data.get("paging") or {}
    total, shown = paging.get("total", 0), paging.get("returned", 0)
    text = f"{shown} of {total} {what}"
    if paging.get("next_offset") is not None:
        text += f" (next: offset={paging['next_offset']})"
    return text


def _summary(tool: str, data: dict[str, Any]) -> str:
    """One or two lines: the data is in the structured content, not repeated here."""
    if tool == "check_code":
        codes = sorted({finding["code"] for finding in data["findings"]})
        opt_in = data["opt_in"]
        text = f"{_paged(data, 'findings')}" + (f": {', '.join(codes)}" if codes else "")
        if opt_in["count"]:
            text += f"; opt-in rules would add {opt_in['count']} ({', '.join(opt_in['codes'])}): pass select"
        return text + f" (target {data['target_torch']}, min {data['min_torch']})."
    if tool == "fix_code":
        applied = ", ".join(f"{code} ×{count}" for code, count in data["applied_by_rule"].items()) or "none"
        text = f"{data['applied']} fixes applied ({applied}); {data['paging']['total']} findings remain"
        more = (data.get("text_paging") or {}).get("next_offset")
        return text + (f"; the text goes on at offset={more}." if more is not None else ".")
    if tool == "explain_rule":
        if "rows" in data and isinstance(data["rows"], list):
            return f"{data['code']} {data['name']}: {_paged(data, 'API rows')}."
        if "page" in data:
            return f"{data['code']} {data['name']}: page characters {data['paging']['offset']}–" \
                   f"{data['paging']['offset'] + len(data['page'])} of {data['paging']['total_characters']}."
        return f"{data['code']} {data['name']}: {data['summary']} ({data['versions']}; fix: {data['fix'] or 'none'})."
    if tool == "search_knowledge":
        top = data["results"][0] if data["results"] else None
        best = f"; best: {top.get('code') if top['kind'] == 'rule' else top['key']}" if top else ""
        return f"{_paged(data, 'results')} for {data['query']!r}{best}."
    if tool == "list_changes":
        return f"{_paged(data, 'changes')} between {data['from']} and {data['to']}; by area: " \
               + ", ".join(f"{area} {count}" for area, count in data["counts"]["by_area"].items()) + "."
    if tool == "audit_checkpoint":
        return f"{_paged(data, 'files audited')}."
    if tool == "plan_install":
        plan = data.get("plan") or {}
        gpus = ", ".join(gpu.get("arch", "?") for gpu in data.get("gpus", [])) or "no GPU"
        if plan.get("command"):
            return f"For {gpus}: `{plan['command']}`" + (f" ({'; '.join(plan['notes'])})" if plan.get("notes") else "") + "."
        return f"No torch build fits {gpus}: see findings."
    return tool


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
    from pydantic import ValidationError

    class Server(MCPServer):
        async def call_tool(self, name, arguments, context=None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as error:
                if isinstance(error.__cause__, ValidationError):
                    raise ToolError(validation_line(name, error.__cause__)) from None
                raise

    server = Server(name="torchpatch", version=__version__, instructions=INSTRUCTIONS, log_level=log_level)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    for tool in TOOLS:
        server.add_tool(_as_tool_error(tool, ToolError), name=tool.__name__, annotations=read_only,
                        structured_output=True)
    return server


def validation_line(tool: str, error) -> str:
    """A pydantic validation error as one actionable line: which argument, what was wrong, what to send."""
    problems: dict[str, str] = {}
    for item in error.errors():
        location = item.get("loc") or ("arguments",)
        where = str(location[0])
        if item.get("type") == "missing":
            message = "missing (required)"
        elif where in problems:  # the other arms of a union (a string or a list): say what was sent
            message = f"got {type(item.get('input')).__name__} {json.dumps(item.get('input'), default=str)[:40]}, " \
                      "which matches none of the types the schema allows"
        else:
            message = item.get("msg", "invalid")
        problems[where] = message
    unique = [f"{where}: {message}" for where, message in problems.items()]
    return f"{tool}: " + "; ".join(unique[:3]) + " (the tool's input schema describes every argument)"


def _as_tool_error(function, tool_error: type[Exception]):
    """The function as a tool: the same signature and docstring (the schema), its dict as structured content
    beside a short text summary, and ToolFailure as the SDK's ToolError."""
    import functools
    import inspect
    import typing

    from mcp_types import CallToolResult, TextContent

    @functools.wraps(function)
    def tool(*args, **kwargs):
        try:
            data = function(*args, **kwargs)
        except ToolFailure as failure:
            raise tool_error(str(failure)) from None
        return CallToolResult(content=[TextContent(type="text", text=_summary(function.__name__, data))],
                              structured_content=data)

    # Resolved annotations (this module postpones them): the SDK builds the schemas from the signature.
    returns = Annotated[CallToolResult, dict[str, Any]]
    tool.__signature__ = inspect.signature(function, eval_str=True).replace(return_annotation=returns)
    tool.__annotations__ = {**typing.get_type_hints(function, include_extras=True), "return": returns}
    return tool
