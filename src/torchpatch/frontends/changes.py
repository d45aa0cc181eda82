"""``torchpatch changes FROM TO [PATHS]``: the upgrade report, for a release pair and optionally a project."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchpatch.knowledge import AREAS, Change, change_for_finding, changes_between
from torchpatch.versions import KNOWN_RELEASES, Version

HELP = ("An upgrade report: every change between two PyTorch releases (rules, API table, platform facts) by area, "
        "with what to do and whether torchpatch fixes it; with PATHS, only what hits that project.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("from_version", metavar="FROM", help="the release you are on, e.g. 2.6")
    parser.add_argument("to_version", metavar="TO", help="the release you move to, e.g. 2.11")
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS",
                        help="files or folders to check (the report then lists what hits them)")
    parser.add_argument("--output-format", choices=("md", "json"), default="md", help="Markdown (default) or JSON")
    parser.add_argument("--area", choices=tuple(AREAS), help="only this area")
    parser.add_argument("--min-torch", metavar="X.Y",
                        help="oldest release the code must still run on while it moves (default: FROM); decides which fixes are safe")
    parser.add_argument("--repositories", nargs="+", type=Path, metavar="REPO",
                        help="an organisation's report over these repositories (each with its own configuration): "
                             "counts per rule and per repository, and which the safe fixes alone bring to TO")


def parse_release(text: str, what: str) -> Version:
    from torchpatch.frontends.cli import UsageError

    try:
        version = Version.parse(text)
    except ValueError as error:
        raise UsageError(f"{what}: {error}") from None
    if version not in KNOWN_RELEASES:
        raise UsageError(f"{what} {text}: torchpatch knows PyTorch {KNOWN_RELEASES[0]}–{KNOWN_RELEASES[-1]}")
    return version


@dataclass
class RuleHits:
    """The findings of one change (a rule, or one API-table row) in the project."""

    change: Change | None
    code: str
    label: str
    findings: int = 0
    safe: int = 0
    unsafe: int = 0
    manual: int = 0
    files: Counter = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "change": self.change.key if self.change else None, "label": self.label,
                "findings": self.findings, "safe_fixes": self.safe, "unsafe_fixes": self.unsafe,
                "manual": self.manual, "files": dict(sorted(self.files.items()))}


@dataclass
class ProjectReport:
    paths: list[str]
    min_torch: Version
    files_checked: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    hits: dict[str, RuleHits] = field(default_factory=dict)  # in the window FROM < release <= TO
    earlier: dict[str, RuleHits] = field(default_factory=dict)  # changes at or before FROM, still in the code
    touches: frozenset[str] = frozenset()  # what of the platform the project's own files name (PLATFORM_TOUCHES)

    def totals(self, hits: dict[str, RuleHits]) -> dict[str, int]:
        return {"findings": sum(h.findings for h in hits.values()), "safe_fixes": sum(h.safe for h in hits.values()),
                "unsafe_fixes": sum(h.unsafe for h in hits.values()), "manual": sum(h.manual for h in hits.values()),
                "files": len({name for h in hits.values() for name in h.files})}


def check_project(paths: list[Path], start: Version, target: Version, min_torch: Version,
                  area: str | None = None) -> ProjectReport:
    """Run the checker over the paths for ``target`` and sort its findings by the change they report."""
    from torchpatch.engine.discover import discover
    from torchpatch.engine.linter import check_file, fix_allowed
    from torchpatch.frontends.check import file_filter, make_resolver

    options = argparse.Namespace(paths=paths, isolated=False, config=None, select=None, extend_select=[], ignore=[],
                                 target_torch=str(target), min_torch=str(min_torch))
    resolver = make_resolver(options)
    report = ProjectReport(paths=[str(path) for path in paths], min_torch=resolver.for_file(paths[0]).min_torch,
                           touches=platform_touches(paths))
    for path in discover(paths, lambda folder: file_filter(resolver.for_folder(folder))):
        result = check_file(path, resolver.for_file(path))
        report.files_checked += 1
        shown = _display(path)
        if result.error is not None:
            report.unreadable.append((shown, result.error))
            continue
        for finding in result.findings:
            change = change_for_finding(finding.code, finding.message)
            if area is not None and (change is None or change.area != area):
                continue
            in_window = change is None or bool(change.events_between(start, target))
            bucket = report.hits if in_window else report.earlier
            key = change.key if change else finding.code
            label = change.title if change else finding.message
            hits = bucket.setdefault(key, RuleHits(change, finding.code, label))
            hits.findings += 1
            hits.files[shown] += 1
            if finding.fix is None:
                hits.manual += 1
            elif fix_allowed(finding.fix, False):
                hits.safe += 1
            else:
                hits.unsafe += 1
    return report


#: What of the platform a project's own files can name, and what each kind of platform change needs.
PLATFORM_TOUCHES = {
    "pins": "a torch requirement in a dependency file",
    "index": "a download.pytorch.org index URL",
    "extensions": "a C++/CUDA extension (cpp_extension in a build file, or .cpp/.cu sources)",
    "python": "a Python version (requires-python, python_requires, .python-version, python= in environment.yml)",
}
_DEPENDENCY_FILE = re.compile(r"(requirements.*\.(txt|in)|pyproject\.toml|setup\.py|setup\.cfg|environment\.ya?ml|"
                              r"Pipfile|constraints.*\.txt)$", re.I)
_INDEX_FILE = re.compile(r"(\.(txt|in|toml|cfg|ya?ml|sh)|Dockerfile.*|Containerfile|Makefile|setup\.py)$", re.I)
_TORCH_REQUIREMENT = re.compile(r"""(^|["'\s,\[])torch\s*(==|>=|<=|~=|!=|<|>|\[|=\s*["']|;|$)""", re.M)
_PYTHON_VERSION = re.compile(r"requires-python|python_requires|^\s*-\s*python\s*[=<>]|Programming Language :: Python ::"
                             r" 3\.\d", re.M | re.I)
_SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist", ".mypy_cache"}


def platform_touches(paths: list[Path]) -> frozenset[str]:
    """Which of PLATFORM_TOUCHES the project's own files name; the report shows only those platform changes."""
    found: set[str] = set()
    for path in paths:
        files = [path] if path.is_file() else []
        if path.is_dir():
            for folder, folders, names in os.walk(path):
                folders[:] = [name for name in folders if name not in _SKIPPED_FOLDERS and not name.startswith(".")]
                files += [Path(folder) / name for name in names]
        for file in files:
            name = file.name
            if name == ".python-version":
                found.add("python")
            if file.suffix in (".cu", ".cuh", ".cpp", ".cc"):
                found.add("extensions")
            if not (_DEPENDENCY_FILE.search(name) or _INDEX_FILE.search(name)):
                continue
            try:
                text = file.read_text(encoding="utf-8", errors="replace")[:200_000]
            except OSError:
                continue
            if "download.pytorch.org" in text:
                found.add("index")
            if _DEPENDENCY_FILE.search(name):
                if _TORCH_REQUIREMENT.search(text):
                    found.add("pins")
                if _PYTHON_VERSION.search(text):
                    found.add("python")
                if "cpp_extension" in text or "CUDAExtension" in text or "CppExtension" in text:
                    found.add("extensions")
    return frozenset(found)


def platform_needs(change: Change) -> frozenset[str]:
    """What a project's files must name for a platform change to concern it (see PLATFORM_TOUCHES)."""
    kind = change.key.rsplit(":", 1)[-1]
    if change.key.startswith("advisory:"):
        return frozenset({"pins"})
    if kind.startswith("python-"):
        return frozenset({"python"})
    if kind == "cxx11-abi":
        return frozenset({"extensions"})
    if kind.startswith("build-"):  # a build on download.pytorch.org: PyPI's default is its own change
        return frozenset({"index"})
    return frozenset({"pins"})  # pypi-default, platform-tag: what `pip install torch==X` gets


def _count(number: int, word: str, plural: str | None = None) -> str:
    """"1 finding", "3 findings"."""
    return f"{number} {word}" if number == 1 else f"{number} {plural or word + 's'}"


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    start = parse_release(args.from_version, "FROM")
    target = parse_release(args.to_version, "TO")
    if start >= target:
        raise UsageError(f"FROM {start} must be older than TO {target}")
    for path in args.paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    min_torch = parse_release(args.min_torch, "--min-torch") if args.min_torch else start
    changes = changes_between(start, target, args.area)
    if args.repositories:
        if args.paths:
            raise UsageError("give the paths either as PATHS (one project) or after --repositories, not both")
        for path in args.repositories:
            if not path.is_dir():
                raise UsageError(f"{path}: not a folder (--repositories takes one folder per repository)")
        projects = [check_project([path], start, target, min_torch, args.area) for path in args.repositories]
        if args.output_format == "json":
            print(json.dumps(organisation_json(start, target, projects), indent=2, ensure_ascii=False))
        else:
            print(render_organisation(start, target, projects), end="")
        return 0
    project = check_project(args.paths, start, target, min_torch, args.area) if args.paths else None
    if args.output_format == "json":
        print(json.dumps(report_json(start, target, changes, project), indent=2, ensure_ascii=False))
    else:
        print(render_markdown(start, target, changes, project, args.area), end="")
    return 0


# -- rendering -------------------------------------------------------------------------------------
def report_json(start: Version, target: Version, changes: list[Change], project: ProjectReport | None) -> dict:
    data: dict[str, Any] = {"from": str(start), "to": str(target), "changes": [change.as_json() for change in changes]}
    if project is not None:
        data["project"] = {
            "paths": project.paths, "min_torch": str(project.min_torch), "files_checked": project.files_checked,
            "totals": project.totals(project.hits),
            "hits": [hits.as_json() for hits in _ordered(project.hits)],
            "earlier": [hits.as_json() for hits in _ordered(project.earlier)],
            "not_checked": [{"file": name, "reason": reason} for name, reason in project.unreadable],
            "earlier_totals": project.totals(project.earlier),
            "platform_touches": sorted(project.touches),
        }
    return data


def repository_status(project: ProjectReport) -> str:
    """``clean`` (nothing in the window hits it), ``safe-fixable`` (the safe fixes alone do the whole move:
    no unsafe or manual finding, every file readable), or ``needs-review``."""
    totals = project.totals(project.hits)
    if project.unreadable or totals["unsafe_fixes"] or totals["manual"]:
        return "needs-review"
    return "safe-fixable" if totals["findings"] else "clean"


def organisation_json(start: Version, target: Version, projects: list[ProjectReport]) -> dict:
    per_rule: Counter = Counter()
    for project in projects:
        for hits in project.hits.values():
            per_rule[hits.code] += hits.findings
    return {
        "from": str(start), "to": str(target),
        "repositories": [{"path": project.paths[0], "status": repository_status(project),
                          "min_torch": str(project.min_torch), "files_checked": project.files_checked,
                          "totals": project.totals(project.hits),
                          "hits": [hits.as_json() for hits in _ordered(project.hits)],
                          "not_checked": [{"file": name, "reason": reason} for name, reason in project.unreadable]}
                         for project in projects],
        "per_rule": dict(sorted(per_rule.items(), key=lambda item: (-item[1], item[0]))),
        "status_counts": dict(Counter(repository_status(project) for project in projects)),
    }


def render_organisation(start: Version, target: Version, projects: list[ProjectReport]) -> str:
    """One table per repository and one per rule: the plan of a team that moves many repositories at once."""
    data = organisation_json(start, target, projects)
    counts = data["status_counts"]
    lines = [f"# Upgrading {_count(len(projects), 'repository', 'repositories')} from PyTorch {start} to {target}", "",
             f"{counts.get('safe-fixable', 0)} safe-fixable end to end (`torchpatch check --fix` alone), "
             f"{counts.get('needs-review', 0)} needing review, {counts.get('clean', 0)} with nothing to change.", "",
             "| repository | status | files | findings | safe | unsafe | by hand | not checked |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for repository in data["repositories"]:
        totals = repository["totals"]
        lines.append(f"| `{repository['path']}` | {repository['status']} | {repository['files_checked']} | "
                     f"{totals['findings']} | {totals['safe_fixes']} | {totals['unsafe_fixes']} | {totals['manual']} | "
                     f"{len(repository['not_checked'])} |")
    if data["per_rule"]:
        in_repositories: Counter = Counter(code for repository in data["repositories"]
                                           for code in {hits["code"] for hits in repository["hits"]})
        lines += ["", "| rule | findings | repositories |", "| --- | ---: | ---: |"]
        lines += [f"| {code} | {findings} | {in_repositories[code]} |" for code, findings in data["per_rule"].items()]
    lines += ["", f"`torchpatch changes {start} {target} PATH` gives one repository's report with what to do; "
              "`torchpatch rule CODE` explains a rule.", ""]
    return "\n".join(lines)


def _ordered(hits: dict[str, RuleHits]) -> list[RuleHits]:
    return sorted(hits.values(), key=lambda h: (-h.findings, h.code, h.label))


def _handling(change: Change) -> str:
    return {"safe fix": "safe fix", "unsafe fix": "unsafe fix (review)", "manual": "found, fix by hand",
            "not detected": "not found by check"}[change.handling()]


def _change_line(change: Change, start: Version, target: Version) -> str:
    when = ", ".join(f"{what} in {version}" for version, what in change.events_between(start, target))
    code = f"{change.code} " if change.code else ""
    checked = "" if change.verified else (" (not checked against the official advisory)" if change.key.startswith(
        "advisory:") else " (not checked against a wheel)")
    return f"- **{when}**: {change.title}{checked}. {change.action} — *{code}{_handling(change)}*"


def render_markdown(start: Version, target: Version, changes: list[Change], project: ProjectReport | None,
                    area: str | None = None) -> str:
    """Without a project: every change, by area. With one: what hits it, then what no code check can see."""
    scope = f" ({AREAS[area][0]})" if area else ""
    if project is None:
        counts = Counter(change.handling() for change in changes)
        lines = [f"# PyTorch {start} → {target}: what changes{scope}", "",
                 f"{len(changes)} changes: {counts['safe fix']} with a safe fix, {counts['unsafe fix']} with an unsafe "
                 f"fix, {counts['manual']} found but fixed by hand, {counts['not detected']} that `torchpatch check` "
                 "cannot see (platform and wheel facts: check the machine with `torchpatch doctor`).", ""]
        return "\n".join(lines + _by_area(changes, start, target, "##")).rstrip() + "\n"
    lines = _render_project(start, target, project)
    unseen = [change for change in changes if not change.detected]
    relevant = [change for change in unseen if platform_needs(change) & project.touches]
    if relevant:
        named = "; ".join(PLATFORM_TOUCHES[kind] for kind in sorted(project.touches))
        lines += [f"## Not visible in code: the machines and wheels{scope}", "",
                  f"Changes between {start} and {target} that no code check can see, shown because the project's "
                  f"files name them ({named}); `torchpatch doctor --target-torch {target}` checks a machine.", ""]
        lines += _by_area(relevant, start, target, "###")
    if len(unseen) > len(relevant):
        command = f"torchpatch changes {start} {target} --area platforms"
        lines += [f"{_count(len(unseen) - len(relevant), 'other platform change')} (Python range, CUDA builds, "
                  f"GPU architectures, ABI, advisories) touch nothing this project's files name; `{command}` lists "
                  f"them and `torchpatch doctor --target-torch {target}` checks a machine.", ""]
    hit = {hits.change.key for hits in project.hits.values() if hits.change is not None}
    others = [change for change in changes if change.detected and change.key not in hit]
    if others:
        command = f"torchpatch changes {start} {target}" + (f" --area {area}" if area else "")
        lines += [f"{_count(len(others), 'other change')} between {start} and {target} that torchpatch checks for "
                  f"do not occur in this code; `{command}` lists every change.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _by_area(changes: list[Change], start: Version, target: Version, level: str) -> list[str]:
    by_area: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        by_area[change.area].append(change)
    lines: list[str] = []
    for key, (title_text, _) in AREAS.items():
        if by_area.get(key):
            lines += [f"{level} {title_text}", ""]
            lines += [_change_line(change, start, target) for change in by_area[key]]
            lines.append("")
    return lines


def _render_project(start: Version, target: Version, project: ProjectReport) -> list[str]:
    where = " ".join(project.paths)
    totals = project.totals(project.hits)
    lines = [f"# Upgrading {where} from PyTorch {start} to {target}", "",
             f"Checked {_count(project.files_checked, 'file')} for PyTorch {target}, keeping them working on "
             f"{project.min_torch} (safe fixes keep behaviour on every release in between)."]
    if not project.hits:
        lines += ["", f"No change between {start} and {target} hits this code.", ""]
    else:
        earlier_totals = project.totals(project.earlier)
        earlier = (f" Also {_count(earlier_totals['findings'], 'finding')} for changes already due at {start} "
                   f"({earlier_totals['safe_fixes']} safe, {earlier_totals['unsafe_fixes']} unsafe, "
                   f"{earlier_totals['manual']} by hand)." if project.earlier else "")
        lines += ["", f"**{_count(totals['findings'], 'finding')} in {_count(totals['files'], 'file')}** for changes "
                  f"between {start} and {target}: **{_count(totals['safe_fixes'], 'safe fix', 'safe fixes')}**, "
                  f"{totals['unsafe_fixes']} unsafe to review, {totals['manual']} to fix by hand.{earlier}", "",
                  "| rule | change | findings | safe | unsafe | by hand | files |", "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
        for hits in _ordered(project.hits):
            files = ", ".join(f"`{name}`" + (f" ×{count}" if count > 1 else "") for name, count in sorted(hits.files.items()))
            lines.append(f"| {hits.code} | {hits.label.replace('|', '/')} | {hits.findings} | {hits.safe} | "
                         f"{hits.unsafe} | {hits.manual} | {files} |")
        lines += ["", "### What to do", ""]
        paths = " ".join(project.paths)
        versions = f"--target-torch {target} --min-torch {project.min_torch}"
        step = 1
        earlier_safe = project.totals(project.earlier)["safe_fixes"]
        if totals["safe_fixes"] or earlier_safe:  # --fix applies them all, whichever release made them due
            also = f", and {earlier_safe} for changes already due at {start}" if earlier_safe else ""
            lines.append(f"{step}. `torchpatch check --fix {versions} {paths}` applies the safe fixes "
                         f"({totals['safe_fixes']}{also}).")
            step += 1
        earlier_unsafe = project.totals(project.earlier)["unsafe_fixes"]
        if totals["unsafe_fixes"] or earlier_unsafe:
            also = f", and {earlier_unsafe} for changes already due at {start}" if earlier_unsafe else ""
            lines.append(f"{step}. `torchpatch check --diff --unsafe-fixes {versions} {paths}` shows the "
                         f"unsafe fixes ({totals['unsafe_fixes']}{also}); `--fix --unsafe-fixes` applies them "
                         "with the safe ones.")
            step += 1
        if totals["manual"]:
            manual = sorted({hits.code for hits in project.hits.values() if hits.manual})
            lines.append(f"{step}. Fix the others by hand ({totals['manual']}: {', '.join(manual)}; "
                         "`torchpatch rule CODE` explains each; `--fix --add-todos` marks them in the code).")
            step += 1
        lines.append(f"{step}. Check the machines: `torchpatch doctor --target-torch {target}` (wheels, CUDA, Python below).")
    if project.earlier:
        earlier = project.totals(project.earlier)
        lines += ["", f"### Already outdated at {start}", "",
                  f"{_count(earlier['findings'], 'finding')} for changes at or before {start} "
                  f"(safe fixes: {earlier['safe_fixes']}):", ""]
        for hits in _ordered(project.earlier):
            lines.append(f"- {hits.code} {hits.label}: {hits.findings} in {_count(len(hits.files), 'file')}")
    if project.unreadable:
        lines += ["", "### Files not checked", ""]
        lines += [f"- `{name}`: {reason}" for name, reason in project.unreadable]
    return lines + [""]
