"""Audit reports as text, JSON (one object per file) and SARIF 2.1.0."""

from __future__ import annotations

import json
import os
import pathlib
import urllib.parse
from typing import Any

from torchpatch import __version__
from torchpatch.audit.auditor import Report
from torchpatch.audit.formats import FORMAT_NAMES

EXIT_CODES = {"safe": 0, "needs-allowlist": 1, "malicious": 3, "unreadable": 3}

RULES = {
    "TPA000": "verdict: what torch.load(weights_only=True) does with the file and whether it is malicious",
    "TPA001": "a global or call that can run code at load time",
    "TPA003": "a FRAME length that disagrees with the opcodes (CPython reads the bytes differently)",
    "TPA002": "a class or function the pickle names that torchpatch has not reviewed (a class's __init__/__setstate__ runs at load; a function can be called)",
    "TPA101": "a pickle that breaks before STOP",
    "TPA102": "nested pickle bytes unpickled with the full unpickler",
    "TPA103": "storage size does not match its declared element count",
    "TPA104": "a call on a literal value (the load fails, nothing runs)",
    "TPA201": "duplicate zip records (torch's miniz lookup and Python's zipfile read different copies)",
    "TPA202": "zip record outside the archive folder (torch refuses the archive)",
    "TPA203": "unexpected tar member",
    "TPA204": "compressed record (torch.save never compresses)",
    "TPA205": "misaligned storage record",
    "TPA206": "CRC-32 mismatch",
    "TPA207": "unreadable zip record",
    "TPA208": "local header name differs from the central directory",
    "TPA301": "TorchScript archive (CVE-2025-32434)",
    "TPA302": "weights_only=True is unsafe before torch 2.6 (CVE-2025-32434)",
    "TPA303": "weights_only unpickler memory corruption before torch 2.10 (CVE-2026-24747)",
    "TPA304": "what a TorchScript archive's code/ calls: tensor math only, or file, side-effect and C++-extension operators",
    "TPA400": "--verify: torch's own weights-only unpickler disagrees or confirms",
}


def exit_code(reports: list[Report]) -> int:
    return max((EXIT_CODES[r.verdict] for r in reports), default=0)


def as_dict(report: Report) -> dict[str, Any]:
    return {
        "filename": report.filename,
        "format": report.format,
        "verdict": report.verdict,
        "weights_only": report.weights_only,
        "torch_version": report.torch_version,
        "reason": report.reason,
        "globals": [g.as_dict() for g in report.globals],
        "allowlist": report.allowlist,
        "review": report.review,
        "snippet": report.snippet,
        "findings": [
            {"member": f.member, "offset": f.offset, "severity": f.severity, "code": f.code, "message": f.message}
            for f in report.findings
        ],
    }


def render_json(reports: list[Report]) -> str:
    return json.dumps([as_dict(r) for r in reports], indent=2)


def render_full(reports: list[Report], skipped: int = 0) -> str:
    lines: list[str] = []
    for report in reports:
        lines.append(f"{report.filename}: {report.verdict} ({FORMAT_NAMES.get(report.format, report.format)}); "
                     f"torch {report.torch_version} weights_only=True: {report.weights_only}")
        lines.append(f"  {report.reason}")
        for finding in report.findings:
            where = (f"{finding.member}:{finding.line}" if finding.line else f"{finding.member}@{finding.offset}") if finding.member else "file"
            lines.append(f"  {finding.code} {finding.severity}: {finding.message} [{where}]")
        if report.allowlist or report.review:
            lines.append(f"  allowlist: {', '.join(report.allowlist) or '(none)'}")
            if report.review:
                lines.append(f"  review before trusting (not in the allowlist): {', '.join(report.review)}")
            lines.extend("    " + line for line in report.snippet.splitlines())
    counts = {verdict: sum(r.verdict == verdict for r in reports) for verdict in EXIT_CODES}
    summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n)
    lines.append(f"{len(reports)} file(s) audited: {summary or 'none'}" + (f"; {skipped} non-checkpoint file(s) skipped" if skipped else ""))
    return "\n".join(lines)


# Severity for code-scanning UIs (GitHub reads properties.security-severity, 0-10).
_SECURITY_SEVERITY = {"TPA000": "9.0", "TPA001": "9.8", "TPA002": "6.5", "TPA003": "9.0", "TPA101": "5.0", "TPA102": "7.0",
                      "TPA103": "7.5", "TPA201": "7.0", "TPA202": "5.0", "TPA206": "6.0", "TPA208": "6.0", "TPA301": "6.0",
                      "TPA302": "8.0", "TPA303": "7.5", "TPA304": "5.0"}
HELP_URI = "https://github.com/torchpatch/torchpatch/blob/main/docs/audit.md"


def _artifact_uri(filename: str, root: str) -> dict[str, str]:
    """A percent-encoded URI relative to the working directory (uriBaseId %SRCROOT%), or an
    absolute file: URI for a file outside it."""
    absolute = os.path.abspath(filename)
    relative = os.path.relpath(absolute, root)
    if relative.startswith(os.pardir + os.sep) or relative == os.pardir or os.path.isabs(relative):
        return {"uri": pathlib.Path(absolute).as_uri()}
    return {"uri": urllib.parse.quote(relative.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def render_sarif(reports: list[Report], root: str = ".") -> str:
    """SARIF 2.1.0 (valid against the OASIS schema): one result per finding and one per file that
    is not safe; byte-offset regions, the pickle member named in the message."""
    root = os.path.abspath(root)
    levels = {"malicious": "error", "error": "error", "warning": "warning", "note": "note"}
    verdict_levels = {"needs-allowlist": "warning", "malicious": "error", "unreadable": "error"}
    results = []
    for report in reports:
        if report.verdict == "safe":
            continue
        artifact = _artifact_uri(report.filename, root)
        results.append({
            "ruleId": "TPA000",
            "level": verdict_levels[report.verdict],
            "message": {"text": f"{report.verdict}: {report.reason}"},
            "locations": [{"physicalLocation": {"artifactLocation": artifact}}],
            "properties": {"verdict": report.verdict, "weights_only": report.weights_only, "format": report.format,
                           "allowlist": report.allowlist, "review": report.review},
        })
        for finding in report.findings:
            location: dict[str, Any] = {"artifactLocation": artifact}
            if finding.line:
                # A text record inside the archive: the line, and the record named in the message.
                location["region"] = {"startLine": finding.line}
                where = f" (in {finding.member}, line {finding.line})"
            elif finding.member or finding.offset:
                location["region"] = {"byteOffset": max(finding.offset, 0)}
                where = f" (in {finding.member}, byte {finding.offset})" if finding.member else ""
            else:
                where = ""
            results.append({
                "ruleId": finding.code,
                "level": levels[finding.severity],
                "message": {"text": finding.message + where},
                "locations": [{"physicalLocation": location}],
            })
    rules = []
    for code, text in RULES.items():
        rules.append({
            "id": code,
            "name": code,
            "shortDescription": {"text": text},
            "fullDescription": {"text": f"torchpatch audit {code}: {text}."},
            "help": {"text": f"{text}. See torchpatch's audit page (docs/audit.md) for what the verdicts mean and what to do.",
                     "markdown": f"**{code}**: {text}. See [torchpatch audit]({HELP_URI})."},
            "helpUri": HELP_URI,
            "properties": {"security-severity": _SECURITY_SEVERITY.get(code, "3.0"), "tags": ["security", "pickle"]},
        })
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchpatch-audit",
                "version": __version__,
                "informationUri": "https://github.com/torchpatch/torchpatch",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": pathlib.Path(root).as_uri() + "/"}},
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2)
