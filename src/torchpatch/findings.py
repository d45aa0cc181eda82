"""What the linter's engine and its rules share: findings, fixes, edits, and what a rule sees of a file.

Both sides import this module and it imports neither (imports run one way: engine → rules → here).
The engine's ``Context`` and ``Reference`` (engine/checker.py) are the implementations of the two
protocols below; rules are written against the protocols.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from torchpatch.versions import Version

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets) with content."""

    start: int
    end: int
    content: str


@dataclass
class Fix:
    """A fix: what it does, in words, and the edits that make it."""

    message: str
    edits: list[Edit]
    applicability: str  # SAFE or UNSAFE
    # Names the fix stopped using: their imports are removed afterwards if nothing else uses them.
    obsolete_names: tuple[str, ...] = ()
    # The removal of an import that only this fix and ``joint_fixes`` together leave unused: ``--fix`` makes
    # these edits only when it applies all of them in one pass (so ``edits`` alone stay a complete fix).
    joint_edits: list[Edit] = field(default_factory=list)
    joint_fixes: list["Fix"] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Two parts of one fix may plan the same import: apply_edits applies equal edits once, so the fix
        # lists them once too (JSON and editor clients apply what is listed).
        self.edits = list(dict.fromkeys(self.edits))


@dataclass
class Diagnostic:
    """A finding as a rule reports it: the code, the message, where, and the fix if any."""

    code: str
    name: str
    message: str
    start: int  # character offsets into the checked text
    end: int
    fix: Fix | None = None
    rule: Any = None  # the torchpatch.rules.base.Rule that reported it
    # Why the rule's fix is not offered (its result would not parse); ``fix`` is then None.
    fix_unavailable: str | None = None


class Reference(Protocol):
    """A Name/Attribute chain (or an import) that resolves to a watched qualified name."""

    node: ast.AST  # the expression node of this prefix of the chain, or the ast.alias of an import
    qualname: str
    scope: Any  # the engine's scope the reference is in (pass it back to ``ctx.scopes``)
    statement: ast.stmt
    in_import: bool  # the name appears in an import statement
    module_node: ast.ImportFrom | None  # for ``from M import x``: the statement, when the match is M


class Context(Protocol):
    """What a rule sees of a Python file: positions, text, versions, and helpers to build fixes."""

    text: str
    tree: ast.Module
    scopes: Any  # the engine's name resolution for the file (``qualname(expr, scope)``)
    scope: Any
    statement: ast.stmt | None
    target: Version
    min_torch: Version

    def start(self, node: ast.AST) -> int: ...
    def end(self, node: ast.AST) -> int: ...
    def source(self, node: ast.AST) -> str: ...
    def parent_of(self, node: ast.AST) -> ast.AST | None: ...
    def attribute_uses(self, name: str) -> set[str] | None: ...
    def diagnostic(self, node: ast.AST | tuple[int, int], message: str, fix: Fix | None = None) -> Diagnostic: ...
    def applicability(self, needs: Version | None = None, behaviour_changes: bool = False) -> str: ...
    def needs_note(self, needs: Version | None) -> str: ...
    def resolves_to(self, expr: ast.expr) -> str | None: ...
    def name_for(self, qualname: str, module: str | None = None) -> tuple[str, list[Edit]]: ...
