"""What the linter's engine and its rules share: findings, fixes, edits, and what a rule sees of a file.

Both sides import this module and it imports neither (imports run one way: engine → rules → here).
The engine's ``Context`` and ``Reference`` (engine/checker.py) are the implementations of the two
protocols below; rules are written against the protocols.
"""

from __future__ import annotations

from torchpatch._record import FrozenRecord, Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    import ast
    from typing import Any, Protocol

    from torchpatch.versions import Version
else:
    Protocol = object  # Reference and Context below are for type checkers and readers: nothing checks them

SAFE = "safe"
UNSAFE = "unsafe"


class Edit(FrozenRecord):
    """Replace text[start:end] (character offsets) with content."""

    __slots__ = ("start", "end", "content")
    _fields = ("start", "end", "content")

    def __init__(self, start: int, end: int, content: str) -> None:
        set_field = object.__setattr__
        set_field(self, "start", start)
        set_field(self, "end", end)
        set_field(self, "content", content)

    def __reduce__(self):
        return Edit, (self.start, self.end, self.content)


class Fix(Record):
    """A fix: what it does, in words, and the edits that make it."""

    _fields = ("message", "edits", "applicability", "obsolete_names", "joint_edits", "joint_fixes")
    _not_compared = _not_shown = frozenset({"joint_fixes"})

    def __init__(self, message: str, edits: list[Edit], applicability: str, obsolete_names: tuple[str, ...] = (),
                 joint_edits: list[Edit] | None = None, joint_fixes: list[Fix] | None = None) -> None:
        self.message = message
        # Two parts of one fix may plan the same import: apply_edits applies equal edits once, so the fix
        # lists them once too (JSON and editor clients apply what is listed).
        self.edits = list(dict.fromkeys(edits))
        self.applicability = applicability  # SAFE or UNSAFE
        # Names the fix stopped using: their imports are removed afterwards if nothing else uses them.
        self.obsolete_names = obsolete_names
        # The removal of an import that only this fix and ``joint_fixes`` together leave unused: ``--fix`` makes
        # these edits only when it applies all of them in one pass (so ``edits`` alone stay a complete fix).
        self.joint_edits = [] if joint_edits is None else joint_edits
        self.joint_fixes = [] if joint_fixes is None else joint_fixes


class Diagnostic(Record):
    """A finding as a rule reports it: the code, the message, where, and the fix if any."""

    _fields = ("code", "name", "message", "start", "end", "fix", "rule", "fix_unavailable")

    def __init__(self, code: str, name: str, message: str, start: int, end: int, fix: Fix | None = None,
                 rule: Any = None, fix_unavailable: str | None = None) -> None:
        self.code = code
        self.name = name
        self.message = message
        self.start = start  # character offsets into the checked text
        self.end = end
        self.fix = fix
        self.rule = rule  # the torchpatch.rules.base.Rule that reported it
        # Why the rule's fix is not offered (its result would not parse); ``fix`` is then None.
        self.fix_unavailable = fix_unavailable


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
