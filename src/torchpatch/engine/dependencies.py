"""Dependency files (requirements, constraints, pyproject.toml, setup.cfg): where each requirement is written."""

from __future__ import annotations

import configparser
import fnmatch
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from torchpatch.rules.base import Diagnostic, Rule
from torchpatch.versions import Version

if TYPE_CHECKING:
    from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEPENDENCY_FILE_PATTERNS = ("requirements*.txt", "constraints*.txt", "pyproject.toml", "setup.cfg")


def is_dependency_file(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in DEPENDENCY_FILE_PATTERNS)


@dataclass(frozen=True)
class RequirementSpan:
    """One requirement as written in a dependency file, with its character offsets."""

    requirement: "Requirement"
    start: int
    end: int

    @property
    def name(self) -> str:
        return self.requirement.name.lower().replace("_", "-")


def requirements_in(path: Path, text: str) -> list[RequirementSpan]:
    if path.name == "pyproject.toml":
        return _pyproject_requirements(text)
    if path.name == "setup.cfg":
        return _setup_cfg_requirements(text)
    return _requirements_txt(text)


def _parse(requirement_text: str) -> "Requirement | None":
    # packaging is imported here, not at start-up: most runs never read a dependency file.
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(requirement_text)
    except InvalidRequirement:
        return None


_LINE = re.compile(r"^[ \t]*(?P<body>[^#\r\n]*?)[ \t]*(?:#.*)?$", re.MULTILINE)


def _requirements_txt(text: str) -> list[RequirementSpan]:
    spans = []
    for match in _LINE.finditer(text):
        body = match.group("body")
        if not body or body.startswith("-"):
            continue
        body = re.split(r"\s+--hash=|\s+;\s*$", body)[0].rstrip("\\ \t")
        requirement = _parse(body)
        if requirement is not None:
            start = match.start("body")
            spans.append(RequirementSpan(requirement, start, start + len(body)))
    return spans


def _pyproject_requirements(text: str) -> list[RequirementSpan]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    written = [str(item) for item in project.get("dependencies", []) or []]
    for extra in (project.get("optional-dependencies", {}) or {}).values():
        written.extend(str(item) for item in extra or [])
    return _locate_strings(text, written)


def _setup_cfg_requirements(text: str) -> list[RequirementSpan]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    written: list[str] = []
    if parser.has_option("options", "install_requires"):
        written.extend(parser.get("options", "install_requires").splitlines())
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            written.extend(value.splitlines())
    items = [line.split("#", 1)[0].strip() for line in written]
    return _locate_strings(text, [item for item in items if item], quoted=False)


def _locate_strings(text: str, written: list[str], quoted: bool = True) -> list[RequirementSpan]:
    """Where each requirement string is written, in order (quoted in TOML, bare in setup.cfg)."""
    spans = []
    position = 0
    for item in written:
        needles = ('"' + item + '"', "'" + item + "'") if quoted else (item,)
        found = [(text.find(needle, position), needle) for needle in needles]
        found = [(index, needle) for index, needle in found if index >= 0]
        if not found:
            continue
        index, needle = min(found)
        start = index + (1 if quoted else 0)
        requirement = _parse(item)
        if requirement is not None:
            spans.append(RequirementSpan(requirement, start, start + len(item)))
        position = index + len(needle)
    return spans


class DependencyContext:
    """What a dependency rule sees: the file's text, the versions, and a way to report."""

    def __init__(self, path: Path, text: str, target: Version, min_torch: Version) -> None:
        self.path = path
        self.text = text
        self.target = target
        self.min_torch = min_torch
        self.rule: Rule | None = None

    def diagnostic(self, span: RequirementSpan, message: str) -> Diagnostic:
        rule = self.rule
        return Diagnostic(code=rule.code, name=rule.name, message=message, start=span.start, end=span.end, rule=rule)


def check_dependencies(path: Path, text: str, rules: list[Rule], target: Version, min_torch: Version) -> list[Diagnostic]:
    watching = [rule for rule in rules if rule.dependencies]
    if not watching:
        return []
    ctx = DependencyContext(path, text, target, min_torch)
    diagnostics: list[Diagnostic] = []
    for span in requirements_in(path, text):
        for rule in watching:
            if span.name in rule.dependencies:
                ctx.rule = rule
                diagnostics.extend(rule.check_requirement(ctx, span))
    return diagnostics
