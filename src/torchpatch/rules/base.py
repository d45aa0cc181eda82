"""What a rule is: its code, versions, prose, examples, and the hooks the engine calls."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping

# The findings a rule returns, and what it sees, live in torchpatch.findings (shared with the engine);
# they are re-exported here, the rule author's import.
from torchpatch._record import FrozenRecord
from torchpatch.findings import SAFE, UNSAFE, Context, Diagnostic, Edit, Fix, Reference
from torchpatch.versions import Version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    import ast
    from typing import ClassVar

__all__ = ["SAFE", "UNSAFE", "CallNeed", "Context", "Diagnostic", "Edit", "Fix", "Invalid", "Reference", "Rule",
           "Valid", "example_code", "example_filename", "example_language"]

DOCS_URL = "https://github.com/torchpatch/torchpatch/blob/main/docs/rules/{name}.md"


class Invalid(FrozenRecord):
    """An example the rule must flag; ``fixed`` is the exact text after ``--fix --unsafe-fixes``."""

    code: str
    fixed: str | None = None
    min_torch: str | None = None  # the oldest release this example must support (affects fix safety)
    target_torch: str | None = None
    filename: str | None = None  # for examples that are not Python: requirements.txt, pyproject.toml
    #: Torch as the oracle: a regular expression that a warning (or the error) torch emits when this example
    #: runs on CPU under the tests' torch must match (tests/test_torch_oracle.py runs it). None: not runnable.
    torch_warns: str | None = None


class Valid(FrozenRecord):
    """A rule's clean example: code it must not report (at ``min_torch`` when given)."""

    code: str
    min_torch: str | None = None
    target_torch: str | None = None
    filename: str | None = None
    #: The example runs on CPU under the tests' torch without any deprecation or behaviour-change warning
    #: (tests/test_torch_oracle.py runs it).
    torch_runs_clean: bool = False


class CallNeed(namedtuple("CallNeed", ("words", "passed", "missing", "counts"),
                          defaults=(frozenset(), (), (), frozenset()))):
    """What a call of a name must show for a rule to report it there: any one of these (``Rule.call_needs``).
    Read off the call's text by the engine (engine/candidates.py), which stays sure of a "no" only where the
    arguments are plain: a ``*``, ``**``, f-string or lambda among them makes every way possible.

    - ``words`` (frozenset of str): substrings of the parenthesized arguments (``{`` and ``set`` for TP234's
      set of parameters).
    - ``passed`` (tuple of (parameter, position or None)): an argument may be given for: by keyword, or by
      position when ``position`` is not None and the call passes more than ``position`` positional arguments
      (``size_average`` of a loss). The parameter ``""``, which no keyword names, stands for a positional
      argument alone.
    - ``missing`` (the same shape): the call may leave out: not by keyword, and not by position (``dim`` of
      softmax). A literal ``None`` counts as left out, so a call that spells ``None`` may leave any of them out.
    - ``counts`` (frozenset of int): numbers of positional arguments the call may pass (a ``*`` unpacking may
      pass any): TP258's deprecated ``x.sub(2, y)`` has exactly two, which ``re.sub(pattern, repl, text)`` does
      not.

    A ``collections.namedtuple``, not a ``typing.NamedTuple``: importing typing costs every start-up 3 ms."""

    __slots__ = ()

    def merged(self, other: "CallNeed") -> "CallNeed":
        """A need either of which may be met: what two rules watching one name need together."""
        return CallNeed(self.words | other.words, tuple(sorted({*self.passed, *other.passed}, key=str)),
                        tuple(sorted({*self.missing, *other.missing}, key=str)), self.counts | other.counts)

    @staticmethod
    def any_of(needs: Iterable["CallNeed"]) -> "CallNeed":
        """The need met where any one of ``needs`` is (at least one)."""
        needs = iter(needs)
        found = next(needs)
        for need in needs:
            found = found.merged(need)
        return found


def example_filename(example: "str | Valid | Invalid") -> str:
    return getattr(example, "filename", None) or "snippet.py"


def example_language(example: "str | Valid | Invalid") -> str:
    name = example_filename(example)
    return {".toml": "toml", ".cfg": "ini", ".txt": "text"}.get(name[name.rfind("."):], "python")


def example_code(example: "str | Valid | Invalid") -> str:
    import textwrap  # only for a rule's documentation, never a check

    text = example if isinstance(example, str) else example.code
    return textwrap.dedent(text).lstrip("\n")


class Rule:
    """Base class. Subclasses set the metadata and implement the hooks for what they watch.

    The class docstring holds the prose a human must write, as Markdown with the headings
    ``## What it does`` and ``## Why is this bad?``; the rest of the rule's page is rendered
    from the metadata and examples.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for tables
    deprecated_in: ClassVar[Version | None] = None
    removed_in: ClassVar[Version | None] = None
    changed_in: ClassVar[Version | None] = None
    replacement_since: ClassVar[Version | None] = None
    fix_safety: ClassVar[str | None] = None  # SAFE / UNSAFE when a fix exists (UNSAFE may become SAFE per min-torch)
    fix_safety_note: ClassVar[str] = ""
    references: ClassVar[tuple[str, ...]] = ()
    torchfix_codes: ClassVar[tuple[str, ...]] = ()
    catalog_ids: ClassVar[tuple[str, ...]] = ()  # rows of shared/knowledge/pytorch-changes.md
    opt_in: ClassVar[bool] = False
    #: torch's own warning as it prints it, for the docs' "torch warns: <message>" line, so a user who sees
    #: the warning finds the rule.
    torch_message: ClassVar[str] = ""

    # What the engine dispatches on.
    calls: ClassVar[frozenset[str]] = frozenset()
    references_to: ClassVar[frozenset[str]] = frozenset()
    methods: ClassVar[frozenset[str]] = frozenset()
    #: Of ``methods``, those the rule can report only in a file where a chain reaches a name it watches
    #: (``calls`` or ``references_to``): the engine looks for them only there (TP209's ``super().__init__()``
    #: is torch's only when the class's base is a watched torch class; most files call it on ``nn.Module``).
    methods_with_mention: ClassVar[frozenset[str]] = frozenset()
    #: Words (substrings) one of which a file's text holds wherever the rule reports through ``calls`` or
    #: ``references_to``: the keyword argument or the literal it looks for (TP231's ``pin_memory_device``). In a
    #: text with none of them, the names only such rules watch are not looked for. Empty: no such word.
    words_needed: ClassVar[frozenset[str]] = frozenset()
    #: Of ``references_to``, the names the rule reports only where one is a decorator (``@name``, ``@name(...)``):
    #: where no other rule watches them, the engine looks for them only after an ``@`` (TP259's ``@torch.no_grad()``).
    decorators_only: ClassVar[frozenset[str]] = frozenset()
    #: Of ``decorators_only``, the names the rule reports only where they decorate a class: the engine skips
    #: one written above a ``def`` (TP259: ``@torch.no_grad()`` on a function is what it is for).
    class_decorators_only: ClassVar[frozenset[str]] = frozenset()
    #: Of ``calls`` (and in no ``references_to``), the names the rule reports only in a call that meets a need
    #: (``CallNeed``): the engine skips a call ``name(...)`` whose text meets none (``torch.optim.Adam(params,
    #: lr=1e-3)`` for TP234, which looks for a set of parameters). A name any other watching rule lacks a need
    #: for is never skipped.
    call_needs: ClassVar[Mapping[str, CallNeed]] = {}
    #: Of ``methods``, the names the rule reports only in a call that meets a need, as ``call_needs`` (TP209's
    #: ``scheduler.step(epoch)``: ``optimizer.step()`` is skipped).
    method_needs: ClassVar[Mapping[str, CallNeed]] = {}
    attributes_assigned: ClassVar[frozenset[str]] = frozenset()  # ``obj.NAME = ...`` on objects of any type
    methods_defined: ClassVar[frozenset[str]] = frozenset()  # ``class C: def NAME(...)`` (a protocol method)
    dependencies: ClassVar[frozenset[str]] = frozenset()  # package names in requirements/pyproject/setup.cfg

    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    # -- hooks ----------------------------------------------------------------------------------
    def check_call(self, ctx: "Context", call: ast.Call, qualname: str) -> Iterable[Diagnostic]:
        return ()

    def check_reference(self, ctx: "Context", reference: "Reference") -> Iterable[Diagnostic]:
        return ()

    def check_method_call(self, ctx: "Context", call: ast.Call) -> Iterable[Diagnostic]:
        return ()

    def check_attribute_assignment(self, ctx: "Context", target: ast.expr, value: ast.expr | None) -> Iterable[Diagnostic]:
        """``obj.NAME = value`` (``target`` is the ast.Attribute) or ``setattr(obj, "NAME", value)`` (``target`` is
        the string constant) for a NAME in ``attributes_assigned``; ``value`` is None for ``obj.NAME += ...``."""
        return ()

    def check_method_definition(self, ctx: "Context", owner: ast.ClassDef,
                                function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterable[Diagnostic]:
        """``def NAME(...)`` directly in the body of class ``owner``, for a NAME in ``methods_defined`` (in any file
        that mentions torch, whether or not the class does)."""
        return ()

    def check_requirement(self, ctx, requirement) -> Iterable[Diagnostic]:
        """A requirement on a watched package in a dependency file (``ctx`` is a DependencyContext)."""
        return ()

    # -- metadata helpers -------------------------------------------------------------------------
    @classmethod
    def torch_messages(cls) -> tuple[str, ...]:
        """Every warning of torch this rule answers, as torch prints it (a data-driven rule has many)."""
        return (cls.torch_message,) if cls.torch_message else ()

    @classmethod
    def since(cls) -> Version:
        """The release where the change first matters: a rule applies when this is <= the target."""
        versions = [ver for ver in (cls.deprecated_in, cls.changed_in, cls.removed_in) if ver is not None]
        return min(versions)

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(name=cls.name)

    @classmethod
    def prose(cls) -> str:
        import inspect  # for the docs only: not imported by a check

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def kind(cls) -> str:
        if cls.removed_in is not None:
            return "removed"
        if cls.deprecated_in is not None:
            return "deprecated"
        return "changed"

    @classmethod
    def version_phrase(cls, target: Version) -> str:
        """'deprecated since PyTorch 2.4', 'removed in 2.11', … as of the target release."""
        if cls.removed_in is not None and cls.removed_in <= target:
            if cls.deprecated_in is not None:
                return f"deprecated in PyTorch {cls.deprecated_in}, removed in {cls.removed_in}"
            return f"removed in PyTorch {cls.removed_in}"
        if cls.deprecated_in is not None:
            tail = f", removed in {cls.removed_in}" if cls.removed_in is not None else ""
            return f"deprecated since PyTorch {cls.deprecated_in}{tail}"
        return f"changed in PyTorch {cls.changed_in}"
