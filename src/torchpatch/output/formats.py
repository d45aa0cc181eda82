"""Rendering findings: ruff's layouts and field names, 1-based columns at the edges."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from torchpatch import __version__
from torchpatch.engine.linter import FileResult, Finding, fix_allowed
from torchpatch.engine.source import Locator
from torchpatch.rules.base import Fix

UNREADABLE_CODE = "TP001"
UNREADABLE_NAME = "file-not-checked"


def _fix_marker(finding: Finding, unsafe_fixes: bool) -> str:
    return "[*] " if fix_allowed(finding.fix, unsafe_fixes) else ""


def _display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _where(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{_display_path(finding.path)}:{cell}{finding.row}:{finding.column + 1}"


def render_concise(results: list[FileResult], unsafe_fixes: bool) -> str:
    lines = []
    for result in results:
        for finding in result.findings:
            lines.append(f"{_where(finding)}: {finding.code} {_fix_marker(finding, unsafe_fixes)}{finding.message}")
    return "\n".join(lines)


def render_full(results: list[FileResult], unsafe_fixes: bool) -> str:
    blocks = []
    for result in results:
        for finding in result.findings:
            gutter = str(finding.row)
            pad = " " * len(gutter)
            line = finding.source_line.replace("\t", "    ")
            prefix = finding.source_line[:finding.column].replace("\t", "    ")
            width = max(1, (finding.end_column - finding.column) if finding.end_row == finding.row
                        else len(finding.source_line) - finding.column)
            block = [
                f"{_where(finding)}: {finding.code} {_fix_marker(finding, unsafe_fixes)}{finding.message}",
                f"{pad} |",
                f"{gutter} | {line}",
                f"{pad} | {' ' * len(prefix)}{'^' * width} {finding.code}",
                f"{pad} |",
            ]
            if finding.fix is not None:
                unsafe = "" if fix_allowed(finding.fix, False) else " (unsafe fix)"
                block.append(f"{pad} = help: {finding.fix.message}{unsafe}")
            block.append(f"{pad} = docs: {finding.url}")
            blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def _edit_json(fix: Fix, result: FileResult) -> list[dict]:
    text = result.fixed_text if result.fixed_text is not None else (result.original_text or "")
    locator = Locator(text)
    edits = []
    source = result.source
    for edit in fix.edits:
        row, column = locator.position(edit.start)
        end_row, end_column = locator.position(edit.end)
        if source is not None:
            _, row, end_row = source.place_rows(row, end_row)
        edits.append({
            "content": edit.content,
            "location": {"row": row, "column": column + 1},
            "end_location": {"row": end_row, "column": end_column + 1},
        })
    return edits


def finding_json(finding: Finding, result: FileResult) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {"applicability": finding.fix.applicability, "message": finding.fix.message,
               "edits": _edit_json(finding.fix, result)}
    entry = {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "url": finding.url,
        "filename": str(finding.path.resolve()),
        "location": {"row": finding.row, "column": finding.column + 1},
        "end_location": {"row": finding.end_row, "column": finding.end_column + 1},
        "fix": fix,
        "noqa_row": finding.noqa_row,
    }
    if finding.cell is not None:
        entry["cell"] = finding.cell
    return entry


def error_json(result: FileResult) -> dict:
    return {
        "code": UNREADABLE_CODE,
        "name": UNREADABLE_NAME,
        "message": f"file not checked: {result.error}",
        "url": None,
        "filename": str(result.path.resolve()),
        "location": {"row": 1, "column": 1},
        "end_location": {"row": 1, "column": 1},
        "fix": None,
        "noqa_row": None,
    }


def render_json(results: list[FileResult]) -> str:
    entries = []
    for result in results:
        if result.error is not None:
            entries.append(error_json(result))
        entries.extend(finding_json(finding, result) for finding in result.findings)
    return json.dumps(entries, indent=2, ensure_ascii=False)


def render_github(results: list[FileResult]) -> str:
    lines = []
    for result in results:
        if result.error is not None:
            lines.append(f"::error title=torchpatch ({UNREADABLE_CODE}),file={result.path}::{result.error}")
        for f in result.findings:
            lines.append(
                f"::error title=torchpatch ({f.code}),file={_display_path(f.path)},line={f.row},col={f.column + 1},"
                f"endLine={f.end_row},endColumn={f.end_column + 1}::{_display_path(f.path)}:{f.row}:{f.column + 1}: "
                f"{f.code} {f.message}")
    return "\n".join(lines)


def render_sarif(results: list[FileResult], rules: Iterable) -> str:
    sarif_results = []
    for result in results:
        for f in result.findings:
            sarif_results.append({
                "ruleId": f.code,
                "level": "error",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path.resolve().as_uri()},
                    "region": {"startLine": f.row, "startColumn": f.column + 1,
                               "endLine": f.end_row, "endColumn": f.end_column + 1},
                }}],
            })
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchpatch", "version": __version__, "informationUri": "https://github.com/torchpatch/torchpatch",
                "rules": [{"id": r.code, "name": r.name, "shortDescription": {"text": r.summary}, "helpUri": r.url()}
                          for r in rules],
            }},
            "results": sarif_results,
        }],
    }
    return json.dumps(document, indent=2)


def render_statistics(results: list[FileResult], unsafe_fixes: bool) -> str:
    counts: Counter[tuple[str, str]] = Counter()
    fixable: Counter[str] = Counter()
    for result in results:
        for f in result.findings:
            counts[(f.code, f.name)] += 1
            if fix_allowed(f.fix, unsafe_fixes):
                fixable[f.code] += 1
        if result.error is not None:
            counts[(UNREADABLE_CODE, UNREADABLE_NAME)] += 1
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = []
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>{width}}\t{code}\t{marker} {name}")
    return "\n".join(lines)
