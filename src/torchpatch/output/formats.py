"""Rendering findings: ruff's layouts and field names, 1-based columns at the edges.

Every format shows every finding, files that could not be checked (TP001) included, with a severity:
``error`` for removed APIs and security, ``warning`` for deprecations, ``note`` for behaviour changes and
opt-in hints.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from collections.abc import Iterable, Iterator
from urllib.parse import quote

from torchpatch import __version__
from torchpatch._record import FrozenRecord, Record
from torchpatch.engine.codes import ENGINE_CODES, FILE_NOT_CHECKED, UNUSED_NOQA
from torchpatch.engine.results import FileResult, Finding, fix_allowed
from torchpatch.engine.source import Locator
from torchpatch.findings import Fix
from torchpatch.output.notebook import notebook_line_numbers
from torchpatch.output.style import Style
from torchpatch.rules import all_rules
from torchpatch.rules._manifest import RuleFacts, rule_facts
from torchpatch.rules.base import Rule

UNREADABLE_CODE, UNREADABLE_NAME = FILE_NOT_CHECKED.code, FILE_NOT_CHECKED.name
UNUSED_NOQA_CODE = UNUSED_NOQA.code
INFORMATION_URI = "https://github.com/torchpatch/torchpatch"
ERROR, WARNING, NOTE = "error", "warning", "note"
#: GitHub code scanning ranks security alerts by this (0-10; 7.0-8.9 is "high").
SECURITY_SEVERITY = "7.5"


def _sha256(data: bytes):
    import hashlib  # for the fingerprints of SARIF and GitLab reports only (hashlib initialises OpenSSL)

    return hashlib.sha256(data)


@lru_cache(maxsize=1)
def _rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


@lru_cache(maxsize=1)
def _facts_by_code() -> dict[str, RuleFacts]:
    """What severities and links need, without importing every rule (rules/_manifest.py)."""
    return {rule.code: rule for rule in rule_facts()}


def is_security(code: str) -> bool:
    return code.startswith("TP3")


def severity(code: str) -> str:
    """error: removed APIs and security; warning: deprecations; note: behaviour changes and opt-in hints."""
    if code == UNREADABLE_CODE:
        return ERROR
    if code == UNUSED_NOQA_CODE:
        return WARNING
    rule = _facts_by_code().get(code)
    if rule is None:
        return WARNING
    if is_security(code):
        return ERROR
    if rule.opt_in or code.startswith(("TP4", "TP9")):  # behaviour and default changes; opt-in hints
        return NOTE
    return {"removed": ERROR, "deprecated": WARNING}.get(rule.kind(), NOTE)


def _fix_marker(finding: Finding, unsafe_fixes: bool) -> str:
    return "[*] " if fix_allowed(finding.fix, unsafe_fixes) else ""


def display_path(path: Path) -> str:
    """The path relative to the working directory when it is inside it (as CI annotations need)."""
    if str(path) == "-":
        return "-"
    return _display_path(path, os.getcwd())


@lru_cache(maxsize=4096)
def _display_path(path: Path, cwd: str) -> str:
    """display_path, once per file and working directory (a file's findings share it)."""
    try:
        return path.resolve().relative_to(_resolved(cwd)).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=4)
def _resolved(folder: str) -> Path:
    """``Path(folder).resolve()`` of the working directory, resolved once per directory (not once per finding:
    a resolve is an lstat for each component of the path)."""
    return Path(folder).resolve()


def _where(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{display_path(finding.path)}:{cell}{finding.row}:{finding.column + 1}"


class Unreadable(Record):
    """A file that could not be checked, placed like a finding (its line when the reason names one)."""

    path: Path
    reason: str
    row: int

    @property
    def message(self) -> str:
        return f"file not checked: {self.reason}"


def unreadable(result: FileResult) -> Unreadable | None:
    if result.error is None:
        return None
    match = re.search(r"\bat line (\d+)", result.error)
    if match is None or result.path.suffix == ".ipynb":  # a notebook's reason names the cell, not a file line
        return Unreadable(result.path, result.error, 1)
    return Unreadable(result.path, result.error, int(match.group(1)))


def _unreadable_line(item: Unreadable, style: Style) -> str:
    return (f"{style.path(display_path(item.path))}:{item.row}:1: {style.code(UNREADABLE_CODE)} "
            f"{item.message}")


def render_concise(results: list[FileResult], unsafe_fixes: bool, style: Style = Style()) -> str:
    lines = []
    for result in results:
        item = unreadable(result)
        if item is not None:
            lines.append(_unreadable_line(item, style))
        for finding in result.findings:
            lines.append(f"{style.path(_where(finding))}: {style.code(finding.code)} "
                         f"{style.fixable(_fix_marker(finding, unsafe_fixes))}{finding.message}")
    return "\n".join(lines)


def render_full(results: list[FileResult], unsafe_fixes: bool, style: Style = Style()) -> str:
    blocks = []
    for result in results:
        item = unreadable(result)
        if item is not None:
            blocks.append(_unreadable_line(item, style))
        for finding in result.findings:
            gutter = str(finding.row)
            pad = " " * len(gutter)
            line = finding.source_line.replace("\t", "    ")
            prefix = finding.source_line[:finding.column].replace("\t", "    ")
            width = max(1, (finding.end_column - finding.column) if finding.end_row == finding.row
                        else len(finding.source_line) - finding.column)
            bar = style.gutter("|")
            block = [
                f"{style.path(_where(finding))}: {style.code(finding.code)} "
                f"{style.fixable(_fix_marker(finding, unsafe_fixes))}{finding.message}",
                f"{pad} {bar}",
                f"{style.gutter(gutter)} {bar} {line}",
                f"{pad} {bar} {' ' * len(prefix)}{style.caret('^' * width + ' ' + finding.code)}",
                f"{pad} {bar}",
            ]
            if finding.fix is not None:
                unsafe = "" if fix_allowed(finding.fix, False) else " (unsafe fix)"
                block.append(f"{pad} {style.gutter('=')} {style.help('help')}: {finding.fix.message}{unsafe}")
            elif finding.fix_unavailable:
                block.append(f"{pad} {style.gutter('=')} {style.help('note')}: no fix offered: {finding.fix_unavailable}")
            runtime = getattr(finding, "runtime", None)
            if runtime is not None:
                tests = len(runtime.tests)
                block.append(f"{pad} {style.gutter('=')} {style.help('runtime')}: torch warned {runtime.count} "
                             f"time{'s' * (runtime.count != 1)} in {tests} test{'s' * (tests != 1)}: "
                             f"{' '.join(runtime.torch_message.split())}")
            block.append(f"{pad} {style.gutter('=')} docs: {finding.url}")
            blocks.append("\n".join(block))
    return "\n\n".join(blocks)


# -- json ---------------------------------------------------------------------------------------------

def _edit_json(fix: Fix, result: FileResult) -> list[dict]:
    text = result.fixed_text if result.fixed_text is not None else (result.original_text or "")
    locator = Locator(text)
    edits = []
    source = result.source
    for edit in [*fix.edits, *fix.joint_edits]:  # taken together, the findings' edits are what --fix writes
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


def _absolute(path: Path) -> str:
    return "-" if str(path) == "-" else str(path.resolve())


def finding_json(finding: Finding, result: FileResult) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {"applicability": finding.fix.applicability, "message": finding.fix.message,
               "edits": _edit_json(finding.fix, result)}
    entry = {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "severity": severity(finding.code),
        "url": finding.url,
        "filename": _absolute(finding.path),
        "location": {"row": finding.row, "column": finding.column + 1},
        "end_location": {"row": finding.end_row, "column": finding.end_column + 1},
        "fix": fix,
        "noqa_row": finding.noqa_row,
    }
    if finding.fix_unavailable:
        entry["fix_unavailable"] = finding.fix_unavailable
    if finding.cell is not None:
        entry["cell"] = finding.cell
    runtime = getattr(finding, "runtime", None)  # a warning torch gave while the code ran (engine/runtime.py)
    if runtime is not None:
        entry.update(runtime.to_json())
    return entry


def error_json(result: FileResult) -> dict:
    item = unreadable(result)
    assert item is not None
    return {
        "code": UNREADABLE_CODE,
        "name": UNREADABLE_NAME,
        "message": item.message,
        "severity": ERROR,
        "url": FILE_NOT_CHECKED.url(),
        "filename": _absolute(result.path),
        "location": {"row": item.row, "column": 1},
        "end_location": {"row": item.row, "column": 1},
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


# -- github workflow commands -------------------------------------------------------------------------

def escape_data(text: str) -> str:
    """GitHub's escaping of a workflow command's message (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """GitHub's escaping of a workflow command's property value (also ``:`` and ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {ERROR: "error", WARNING: "warning", NOTE: "notice"}


def _file_rows(finding: Finding, result: FileResult) -> tuple[int, int]:
    """The finding's first and last line in the file on disk (for a notebook: lines of the .ipynb JSON)."""
    if finding.cell is not None and result.source is not None and result.source.notebook_raw is not None:
        lines = notebook_line_numbers(result.source.notebook_raw).get(finding.cell - 1)
        if lines:
            def at(row: int) -> int:
                return lines[min(max(row, 1), len(lines)) - 1]
            return at(finding.row), at(finding.end_row)
        return 1, 1
    return finding.row, finding.end_row


def render_github(results: list[FileResult]) -> str:
    lines = []
    for result in results:
        item = unreadable(result)
        if item is not None:
            path = display_path(item.path)
            lines.append(
                f"::error title={escape_property(f'torchpatch ({UNREADABLE_CODE})')},file={escape_property(path)},"
                f"line={item.row}::{escape_data(f'{path}:{item.row}:1: {UNREADABLE_CODE} {item.message}')}")
        for f in result.findings:
            path = display_path(f.path)
            level = _GITHUB_LEVEL[severity(f.code)]
            title = escape_property(f"torchpatch ({f.code})")
            message = escape_data(f"{_where(f)}: {f.code} {f.message}")
            if f.cell is not None:  # columns of a cell are not columns of the .ipynb file
                row, end_row = _file_rows(f, result)
                lines.append(f"::{level} title={title},file={escape_property(path)},line={row},endLine={end_row}::{message}")
            else:
                lines.append(
                    f"::{level} title={title},file={escape_property(path)},line={f.row},col={f.column + 1},"
                    f"endLine={f.end_row},endColumn={f.end_column + 1}::{message}")
    return "\n".join(lines)


def render_step_summary(results: list[FileResult]) -> str:
    """A per-rule table for ``$GITHUB_STEP_SUMMARY`` (Markdown)."""
    counts: Counter[tuple[str, str]] = Counter()
    for result in results:
        if result.error is not None:
            counts[(UNREADABLE_CODE, UNREADABLE_NAME)] += 1
        for f in result.findings:
            counts[(f.code, f.name)] += 1
    files = len({r.path for r in results if r.findings or r.error is not None})
    if not counts:
        return "### torchpatch\n\nAll checks passed!\n"
    total = sum(counts.values())
    lines = ["### torchpatch", "", f"{total} finding{'s' * (total != 1)} in {files} file{'s' * (files != 1)}.", "",
             "| code | rule | severity | count |", "| --- | --- | --- | ---: |"]
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = _facts_by_code().get(code)
        label = f"[{name}]({rule.url()})" if rule is not None else name
        lines.append(f"| {code} | {label} | {severity(code)} | {count} |")
    return "\n".join(lines) + "\n"


# -- sarif --------------------------------------------------------------------------------------------

class _Descriptor(FrozenRecord):
    """A code as the output formats describe it (the SARIF rule list)."""

    code: str
    name: str
    summary: str
    full: str
    page: str
    url: str | None
    tags: tuple[str, ...]


def _first_paragraph(markdown: str, heading: str = "## What it does") -> str:
    text = markdown.split(heading, 1)[1] if heading in markdown else markdown
    for block in text.strip().split("\n\n"):
        block = block.strip()
        if block and not block.startswith("#"):
            return " ".join(block.split())
    return ""


def _descriptor(code: str) -> _Descriptor:
    engine = ENGINE_CODES.get(code)
    if engine is not None:
        tag = "error" if engine is FILE_NOT_CHECKED else "maintainability"
        return _Descriptor(code, engine.name, engine.summary, f"{engine.what_it_does} {engine.why}", engine.page(),
                           engine.url(), ("torchpatch", tag))
    from torchpatch.docs import render_rule_page

    rule = _rules_by_code()[code]
    tags = ["torchpatch", "pytorch", {"removed": "removed-api", "deprecated": "deprecated-api"}.get(rule.kind(), "behaviour-change")]
    if is_security(code):
        tags.append("security")
    if rule.opt_in:
        tags.append("opt-in")
    page = render_rule_page(rule)
    return _Descriptor(code, rule.name, rule.summary + ".", _first_paragraph(rule.prose()) or rule.summary + ".",
                       page, rule.url(), tuple(tags))


def _rule_json(descriptor: _Descriptor) -> dict:
    properties: dict = {"tags": list(descriptor.tags), "precision": "high"}
    if is_security(descriptor.code):
        properties["security-severity"] = SECURITY_SEVERITY
    rule = {
        "id": descriptor.code,
        "name": descriptor.name,
        "shortDescription": {"text": descriptor.summary},
        "fullDescription": {"text": descriptor.full},
        "help": {"text": descriptor.page, "markdown": descriptor.page},
        "defaultConfiguration": {"level": severity(descriptor.code)},
        "properties": properties,
    }
    if descriptor.url:
        rule["helpUri"] = descriptor.url
    return rule


def _artifact(path: Path) -> dict:
    relative = display_path(path)
    if relative == "-" or Path(relative).is_absolute():
        return {"uri": path.resolve().as_uri() if relative != "-" else "stdin"}
    return {"uri": quote(relative), "uriBaseId": "%SRCROOT%"}


def _fingerprints(result: FileResult) -> Iterator[str]:
    """One per finding: rule, path and the text of its line, plus which occurrence of that pair it is —
    stable when unrelated lines are added or removed, unlike line numbers."""
    seen: Counter[tuple[str, str]] = Counter()
    path = display_path(result.path)
    for f in result.findings:
        line = " ".join(f.source_line.split())
        seen[(f.code, line)] += 1
        key = f"{f.code}\0{path}\0{f.cell}\0{line}\0{seen[(f.code, line)]}"
        yield _sha256(key.encode("utf-8")).hexdigest()[:32]


def render_sarif(results: list[FileResult], rules: Iterable | None = None) -> str:
    """SARIF 2.1.0 as GitHub code scanning reads it. ``rules`` is accepted for compatibility; the rule
    descriptors are those of the codes that occur."""
    codes = sorted({f.code for r in results for f in r.findings}
                   | ({UNREADABLE_CODE} if any(r.error is not None for r in results) else set()))
    index = {code: position for position, code in enumerate(codes)}
    sarif_results = []
    for result in results:
        item = unreadable(result)
        if item is not None:
            sarif_results.append({
                "ruleId": UNREADABLE_CODE, "ruleIndex": index[UNREADABLE_CODE], "level": ERROR,
                "message": {"text": item.message},
                "locations": [{"physicalLocation": {"artifactLocation": _artifact(item.path),
                                                    "region": {"startLine": item.row}}}],
                "partialFingerprints": {"torchpatch/v1": _sha256(
                    f"{UNREADABLE_CODE}\0{display_path(item.path)}".encode()).hexdigest()[:32]},
            })
        for f, fingerprint in zip(result.findings, _fingerprints(result)):
            if f.cell is not None:
                row, end_row = _file_rows(f, result)
                region = {"startLine": row, "endLine": end_row}
                text = f"cell {f.cell}, line {f.row}, column {f.column + 1}: {f.message}"
            else:
                region = {"startLine": f.row, "startColumn": f.column + 1,
                          "endLine": f.end_row, "endColumn": f.end_column + 1}
                text = f.message
            location: dict = {"physicalLocation": {"artifactLocation": _artifact(f.path), "region": region}}
            if f.cell is not None:
                location["logicalLocations"] = [{"name": f"cell {f.cell}", "kind": "element",
                                                 "fullyQualifiedName": f"{display_path(f.path)}#cell-{f.cell}"}]
            entry = {
                "ruleId": f.code, "ruleIndex": index[f.code], "level": severity(f.code),
                "message": {"text": text},
                "locations": [location],
                "partialFingerprints": {"torchpatch/v1": fingerprint},
            }
            if f.fix is not None:
                entry["properties"] = {"fix": f.fix.message, "applicability": f.fix.applicability}
            runtime = getattr(f, "runtime", None)
            if runtime is not None:
                entry.setdefault("properties", {}).update(runtime.to_json())
            sarif_results.append(entry)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchpatch", "version": __version__, "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_json(_descriptor(code)) for code in codes],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": sarif_results,
        }],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


# -- statistics and the summary line ------------------------------------------------------------------

def _statistics(results: list[FileResult], unsafe_fixes: bool) -> tuple[Counter, Counter]:
    counts: Counter[tuple[str, str]] = Counter()
    fixable: Counter[str] = Counter()
    for result in results:
        for f in result.findings:
            counts[(f.code, f.name)] += 1
            if fix_allowed(f.fix, unsafe_fixes):
                fixable[f.code] += 1
        if result.error is not None:
            counts[(UNREADABLE_CODE, UNREADABLE_NAME)] += 1
    return counts, fixable


def render_statistics(results: list[FileResult], unsafe_fixes: bool) -> str:
    counts, fixable = _statistics(results, unsafe_fixes)
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = []
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>{width}}\t{code}\t{marker} {name}")
    return "\n".join(lines)


def render_statistics_json(results: list[FileResult], unsafe_fixes: bool) -> str:
    """ruff's ``--statistics --output-format json``: code, name, count, fixable (plus our severity)."""
    counts, fixable = _statistics(results, unsafe_fixes)
    entries = [{"code": code, "name": name, "count": count, "fixable": bool(fixable[code]),
                "severity": severity(code)}
               for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    return json.dumps(entries, indent=2)


def severity_counts(results: list[FileResult]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for result in results:
        if result.error is not None:
            counts[ERROR] += 1
        for f in result.findings:
            counts[severity(f.code)] += 1
    return counts


def describe_severities(counts: Counter[str]) -> str:
    """'2 errors, 1 warning, 3 notes' (only the levels that occur)."""
    words = {ERROR: ("error", "errors"), WARNING: ("warning", "warnings"), NOTE: ("note", "notes")}
    return ", ".join(f"{counts[level]} {words[level][counts[level] != 1]}"
                     for level in (ERROR, WARNING, NOTE) if counts[level])


def github_step_summary_path() -> str | None:
    return os.environ.get("GITHUB_STEP_SUMMARY") or None


# -- json-lines, junit, gitlab, pylint (ruff's layouts) -----------------------------------------------

def render_json_lines(results: list[FileResult]) -> str:
    """One JSON object per line, the fields of ``--output-format json`` (ruff's json-lines)."""
    lines = []
    for result in results:
        if result.error is not None:
            lines.append(json.dumps(error_json(result), ensure_ascii=False))
        lines.extend(json.dumps(finding_json(finding, result), ensure_ascii=False) for finding in result.findings)
    return "\n".join(lines)


def render_pylint(results: list[FileResult]) -> str:
    """``path:line: [CODE] message``, the line pylint's parseable output starts with (and ruff's pylint
    format writes); a notebook's line is the line of the .ipynb file."""
    lines = []
    for result in results:
        item = unreadable(result)
        if item is not None:
            lines.append(f"{display_path(item.path)}:{item.row}: [{UNREADABLE_CODE}] {item.message}")
        for f in result.findings:
            row, _ = _file_rows(f, result)
            lines.append(f"{display_path(f.path)}:{row}: [{f.code}] {f.message}")
    return "\n".join(lines)


#: GitLab Code Quality severities: info, minor, major, critical, blocker.
_GITLAB_SEVERITY = {ERROR: "major", WARNING: "minor", NOTE: "info"}


def render_gitlab(results: list[FileResult]) -> str:
    """A GitLab Code Quality report: a JSON array of issues with description, check_name, fingerprint,
    severity and location (path relative to the project, lines.begin); security findings are critical."""
    issues = []
    for result in results:
        item = unreadable(result)
        path = display_path(result.path)
        if item is not None:
            key = f"{UNREADABLE_CODE}\0{path}\0{item.reason}"
            issues.append({
                "description": f"{UNREADABLE_CODE}: {item.message}", "check_name": UNREADABLE_CODE,
                "fingerprint": _sha256(key.encode("utf-8")).hexdigest()[:32], "severity": "major",
                "location": {"path": path, "lines": {"begin": item.row, "end": item.row}}})
        for finding, fingerprint in zip(result.findings, _fingerprints(result)):
            row, end_row = _file_rows(finding, result)
            level = "critical" if is_security(finding.code) else _GITLAB_SEVERITY[severity(finding.code)]
            issues.append({
                "description": f"{finding.code}: {finding.message}", "check_name": finding.code,
                "fingerprint": fingerprint, "severity": level,
                "location": {"path": path, "lines": {"begin": row, "end": end_row}}})
    return json.dumps(issues, indent=2, ensure_ascii=False)


def render_junit(results: list[FileResult]) -> str:
    """JUnit XML as CI test reports read it (GitLab, Jenkins, Azure): one testsuite per file with findings,
    one failing testcase per finding (ruff's layout); a clean run is one passing testcase."""
    import xml.etree.ElementTree as ElementTree

    rows = []  # (path, code, row, column, message)
    for result in results:
        item = unreadable(result)
        if item is not None:
            rows.append((display_path(item.path), UNREADABLE_CODE, item.row, 1, item.message))
        rows.extend((display_path(f.path), f.code, f.row, f.column + 1, f.message) for f in result.findings)
    root = ElementTree.Element("testsuites", name="torchpatch", tests=str(max(len(rows), 1)),
                               failures=str(len(rows)), errors="0", skipped="0")
    if not rows:
        suite = ElementTree.SubElement(root, "testsuite", name="torchpatch", tests="1", failures="0", errors="0",
                                       skipped="0")
        ElementTree.SubElement(suite, "testcase", name="No findings", classname="torchpatch")
    by_path: dict[str, list] = {}
    for row in rows:
        by_path.setdefault(row[0], []).append(row)
    for path, findings in by_path.items():
        suite = ElementTree.SubElement(root, "testsuite", name=path, tests=str(len(findings)),
                                       failures=str(len(findings)), errors="0", skipped="0", package="torchpatch")
        classname = path.rsplit(".", 1)[0] if "." in Path(path).name else path
        for _, code, row, column, message in findings:
            case = ElementTree.SubElement(suite, "testcase", name=f"torchpatch.{code}", classname=classname,
                                          line=str(row), column=str(column))
            failure = ElementTree.SubElement(case, "failure", message=message)
            failure.text = f"line {row}, col {column}, {message}"
    ElementTree.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode")
