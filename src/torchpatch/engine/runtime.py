"""Warnings torch gave while code ran, turned into findings: the static rule that covers the line, or TP002."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Iterable

from torchpatch.engine.codes import RUNTIME_WARNING
from torchpatch.engine.linter import FileResult, Finding, check_file
from torchpatch.engine.settings import Settings

#: How many test node ids a finding lists (the count says how many there were).
MAX_TESTS = 20
#: The packages whose warnings are recorded (and whose frames are skipped to find the user's line).
TORCH_PACKAGES = ("torch", "torchvision", "torchaudio", "torchao")
DEPRECATION_CATEGORIES = ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning")
_DEPRECATION_WORDS = re.compile(r"deprecat|will be removed|no longer supported|is removed|will (raise|throw) an? (error|exception)",
                                re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_COMMON_WORDS = frozenset(
    "the and for use has have been will this that with from not are was you your instead please pass call "
    "since default torch pytorch warning deprecated argument arguments function".split())


@dataclass
class WarningHit:
    """One warning torch gave, placed at the user's line, with how often and in which tests."""

    path: str
    row: int
    category: str
    message: str
    count: int = 1
    tests: list[str] = field(default_factory=list)
    torch_location: str | None = None  # where torch's own ``stacklevel`` pointed, when that was not the user's line
    code: str | None = None  # the code a saved report gave it (the plugin's terminal summary)
    inside_torch: bool = False  # only a torch file is known (a plain log whose stacklevel pointed into torch)
    uncertain: bool = False  # read from a log, at a user's line, naming nothing of torch: kept when a rule covers it

    def key(self) -> tuple[str, int, str, str]:
        return (self.path, self.row, self.category, self.message)

    def add(self, other: "WarningHit") -> None:
        self.count += other.count
        for test in other.tests:
            if test not in self.tests:
                self.tests.append(test)
        self.torch_location = self.torch_location or other.torch_location
        self.code = self.code or other.code

    def to_json(self) -> dict:
        return {"path": self.path, "row": self.row, "category": self.category, "message": self.message,
                "count": self.count, "tests": self.tests, "torch_location": self.torch_location,
                "code": self.code, "inside_torch": self.inside_torch, "uncertain": self.uncertain}

    @classmethod
    def from_json(cls, data: dict) -> "WarningHit":
        return cls(str(data["path"]), int(data["row"]), str(data["category"]), str(data["message"]),
                   int(data.get("count", 1)), [str(t) for t in data.get("tests", [])], data.get("torch_location"),
                   data.get("code"), bool(data.get("inside_torch", False)), bool(data.get("uncertain", False)))


def merge_hits(hits: Iterable[WarningHit]) -> list[WarningHit]:
    merged: dict[tuple, WarningHit] = {}
    for hit in hits:
        known = merged.get(hit.key())
        if known is None:
            merged[hit.key()] = WarningHit(**{f.name: getattr(hit, f.name) for f in fields(WarningHit)})
            merged[hit.key()].tests = list(hit.tests)
        else:
            known.add(hit)
    return list(merged.values())


def is_deprecation(category: str, message: str) -> bool:
    """A deprecation: its category says so, or (torch gives most of them as UserWarning) its message does."""
    return category.rsplit(".", 1)[-1] in DEPRECATION_CATEGORIES or bool(_DEPRECATION_WORDS.search(message))


@dataclass
class RuntimeInfo:
    """What the run saw at a finding's line: the warnings torch gave there, how often, in which tests."""

    hits: list[WarningHit]

    @property
    def count(self) -> int:
        return sum(hit.count for hit in self.hits)

    @property
    def tests(self) -> list[str]:
        tests: list[str] = []
        for hit in self.hits:
            tests.extend(test for test in hit.tests if test not in tests)
        return tests

    @property
    def torch_message(self) -> str:
        return max(self.hits, key=lambda hit: hit.count).message

    @property
    def deprecation(self) -> bool:
        return any(is_deprecation(hit.category, hit.message) for hit in self.hits)

    def to_json(self) -> dict:
        tests = self.tests
        main = max(self.hits, key=lambda hit: hit.count)
        entry = {"runtime": True, "count": self.count, "tests": tests[:MAX_TESTS], "tests_total": len(tests),
                 "torch_message": main.message, "category": main.category}
        if len(self.hits) > 1:
            entry["torch_messages"] = [{"category": hit.category, "message": hit.message, "count": hit.count}
                                       for hit in self.hits]
        if main.torch_location:
            entry["torch_location"] = main.torch_location
        return entry


class RuntimeFinding(Finding):
    """A finding that a run of the code confirmed (a static rule's) or found alone (TP002)."""

    _fields = (*Finding._fields, "runtime")

    def __init__(self, *args, runtime: RuntimeInfo | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.runtime = runtime


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)} - _COMMON_WORDS


def _relatedness(hit: WarningHit, finding: Finding) -> int:
    return len(_words(hit.message) & _words(f"{finding.name.replace('-', ' ')} {finding.message}"))


def covering_finding(hit: WarningHit, findings: list[Finding]) -> Finding | None:
    """The static finding that stands for this warning: one on the warning's line (or whose statement spans
    it), the one whose rule shares most words with torch's message when there are several."""
    on_line = [f for f in findings if f.row == hit.row] or [f for f in findings if f.row <= hit.row <= f.end_row]
    if not on_line:
        return None
    if hit.code:  # a saved report named the rule: keep it when the file still has that finding
        named = [f for f in on_line if f.code == hit.code]
        if named:
            return named[0]
    return max(on_line, key=lambda f: _relatedness(hit, f))


def _message(hit: WarningHit) -> str:
    text = " ".join(hit.message.split())
    short = text if len(text) <= 200 else text[:197] + "..."
    if hit.inside_torch:
        return (f"torch warned inside torch ({hit.category}: {short}); the log does not name the line of your code "
                "that caused it: run the tests with `pytest --torchpatch` to find it")
    return f"torch warned at run time ({hit.category}): {short}"


def _runtime_finding(hit_group: list[WarningHit], path: Path, lines: list[str]) -> RuntimeFinding:
    hit = hit_group[0]
    line = lines[hit.row - 1] if 0 < hit.row <= len(lines) else ""
    column = len(line) - len(line.lstrip())
    return RuntimeFinding(
        code=RUNTIME_WARNING.code, name=RUNTIME_WARNING.name, message=_message(hit), url=RUNTIME_WARNING.url(),
        path=path, row=hit.row, column=column, end_row=hit.row, end_column=max(column, len(line.rstrip())), fix=None,
        noqa_row=hit.row, source_line=line, runtime=RuntimeInfo(hit_group))


def _confirmed(finding: Finding, hit_group: list[WarningHit]) -> RuntimeFinding:
    values = {name: getattr(finding, name) for name in Finding._fields}
    return RuntimeFinding(**values, runtime=RuntimeInfo(hit_group))


def resolve_path(path: str, root: Path) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else root / candidate


def attribute(hits: list[WarningHit], settings_for: Callable[[Path], Settings], root: Path | None = None,
              static: dict[Path, FileResult] | None = None) -> list[FileResult]:
    """One FileResult per file the hits name: the static findings that the hits confirm (with their fixes),
    and a TP002 finding for each line that no static finding covers. ``static`` holds results already
    checked (``check PATHS --from-warnings``): a line found both ways is one finding, and the other static
    findings of those files are kept."""
    root = root or Path.cwd()
    by_file: dict[Path, list[WarningHit]] = {}
    for hit in merge_hits(hits):
        by_file.setdefault(resolve_path(hit.path, root).resolve(), []).append(hit)
    static_by_path = {path.resolve(): result for path, result in (static or {}).items()}
    results: dict[Path, FileResult] = {}
    for resolved, file_hits in by_file.items():
        result = static_by_path.pop(resolved, None)
        keep_static = result is not None
        shown = Path(file_hits[0].path)
        display = shown if not shown.is_absolute() or not root else resolved
        if result is None and resolved.is_file() and not any(hit.inside_torch for hit in file_hits):
            result = check_file(resolved if shown.is_absolute() else display, settings_for(resolved))
        findings = result.findings if result is not None and result.error is None else []
        candidates = findings
        if keep_static and result.error is None and resolved.is_file():
            # the PATHS' selection may leave out the rule that covers a warning: every rule may cover one
            every_rule = check_file(result.path, settings_for(resolved)).findings
            known = {(f.code, f.row, f.column) for f in findings}
            candidates = [*findings, *(f for f in every_rule if (f.code, f.row, f.column) not in known)]
        lines = _read_lines(resolved)
        groups: dict[int, tuple[Finding | None, list[WarningHit]]] = {}
        runtime_only: dict[int, list[WarningHit]] = {}
        for hit in sorted(file_hits, key=lambda h: (h.row, -h.count)):
            covering = covering_finding(hit, candidates)
            if covering is None and hit.uncertain:
                continue  # not known to be torch's, and no rule says it is
            if covering is None:
                runtime_only.setdefault(hit.row, []).append(hit)
            else:
                groups.setdefault(id(covering), (covering, []))[1].append(hit)
        confirmed = {key: _confirmed(finding, group) for key, (finding, group) in groups.items()}
        new: list[Finding] = []
        if keep_static:
            new = [confirmed.pop(id(f), f) for f in findings] + list(confirmed.values())
        else:
            new = list(confirmed.values())
        path = result.path if result is not None else display
        new.extend(_runtime_finding(group, path, lines) for group in runtime_only.values())
        new.sort(key=lambda f: (f.row, f.column, f.code))
        if result is None:
            result = FileResult(path=path)
        result.findings = new
        if not keep_static:
            result.error = None  # a runtime finding stands even where the file cannot be checked statically
        results[resolved] = result
    if static is None:
        return list(results.values())
    ordered = [results.pop(path.resolve(), result) for path, result in static.items()]
    return [*ordered, *results.values()]


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def runtime_findings(results: list[FileResult]) -> list[RuntimeFinding]:
    return [f for r in results for f in r.findings if isinstance(f, RuntimeFinding) and f.runtime is not None]


def covered_share(results: list[FileResult]) -> Counter[str]:
    """How many runtime lines a static rule covers ("rule") and how many only the run found ("runtime")."""
    counts: Counter[str] = Counter()
    for finding in runtime_findings(results):
        counts["runtime" if finding.code == RUNTIME_WARNING.code else "rule"] += 1
    return counts
