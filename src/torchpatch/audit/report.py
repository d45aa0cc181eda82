"""Audit reports as text, JSON (one object per file) and SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from torchpatch import __version__
from torchpatch.audit.auditor import Report
from torchpatch.audit.formats import FORMAT_NAMES

EXIT_CODES = {"safe": 0, "needs-allowlist": 1, "malicious": 3, "unreadable": 3}

RULES = {
    "TPA000": "verdict: what torch.load(weights_only=True) does with the file and whether it is malicious",
    "TPA001": "a global or call that can run code at load time",
    "TPA003": "a FRAME length that disagrees with the opcodes (CPython reads the bytes differently)",
    "TPA002": "a class the pickle builds that torchpatch has not reviewed (its __init__/__setstate__ runs at load)",
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
            where = f"{finding.member}@{finding.offset}" if finding.member else "file"
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


def render_sarif(reports: list[Report]) -> str:
    levels = {"malicious": "error", "error": "error", "warning": "warning", "note": "note"}
    verdict_levels = {"safe": "none", "needs-allowlist": "warning", "malicious": "error", "unreadable": "error"}
    results = []
    for report in reports:
        location = {"physicalLocation": {"artifactLocation": {"uri": report.filename}}}
        results.append({
            "ruleId": "TPA000",
            "level": verdict_levels[report.verdict],
            "message": {"text": f"{report.verdict}: {report.reason}"},
            "locations": [location],
            "properties": {"verdict": report.verdict, "weights_only": report.weights_only, "format": report.format, "allowlist": report.allowlist},
        })
        for finding in report.findings:
            region = {"physicalLocation": {"artifactLocation": {"uri": report.filename}, "region": {"byteOffset": finding.offset}}}
            results.append({
                "ruleId": finding.code,
                "level": levels[finding.severity],
                "message": {"text": finding.message + (f" (in {finding.member})" if finding.member else "")},
                "locations": [region],
            })
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchpatch-audit",
                "version": __version__,
                "informationUri": "https://github.com/torchpatch/torchpatch",
                "rules": [{"id": code, "shortDescription": {"text": text}} for code, text in RULES.items()],
            }},
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2)
