"""Dependency files: run the rules that watch a package on each requirement written for it.

Where each requirement is written (the parsing) is torchpatch/dependency_files.py, shared with the rules.
"""

from __future__ import annotations

from pathlib import Path

from torchpatch.findings import Diagnostic
from torchpatch.rules.base import Rule
from torchpatch.versions import Version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from torchpatch.dependency_files import RequirementSpan


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
    from torchpatch.dependency_files import requirements_in  # the parsers: only for a dependency file

    ctx = DependencyContext(path, text, target, min_torch)
    diagnostics: list[Diagnostic] = []
    for span in requirements_in(path, text):
        for rule in watching:
            if span.name in rule.dependencies:
                ctx.rule = rule
                diagnostics.extend(rule.check_requirement(ctx, span))
    return diagnostics
