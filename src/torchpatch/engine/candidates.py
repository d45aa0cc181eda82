"""Which mentions of a tracked name can reach a rule: the walker visits only the statements that hold one.

A rule is triggered by a qualified name it watches (``calls`` and ``references_to`` of the enabled rules)
or by a method name (``methods``, found by the checker separately). A Name/Attribute chain
``n.a.b.c`` resolves to ``q.a.b.c``, where ``q`` is what the name ``n`` is bound to there, and the walker
dispatches on the chain's prefixes ``q``, ``q.a``, ``q.a.b`` and ``q.a.b.c``. So a mention of ``n`` can
trigger a rule only when one of those is watched; and once a prefix is not the start of any watched name
(``torch.cat``, ``nn.Linear``), nothing longer is. Most mentions of torch in real code are of the second
kind, and the statements that hold only such mentions need not be walked at all.

The chain is read off the text after the name: ``.attr`` parts with any whitespace, line continuations
and comments between them (``torch  # why\\n    .load`` inside brackets). Reading more than the syntax
tree holds is safe (it can only keep more mentions); reading less is not, so a chain that stops while
it is still the start of a watched name and is followed by ``)`` and then ``.`` (``(torch.cuda).amp``)
is kept. ``q`` is every qualified name the name is bound to anywhere in the file
(:meth:`ScopeTree.binding_qualname` of each binding, aliases such as ``fn = torch.load`` included), so
shadowing and conditional bindings only keep more. Decided from the rules' declarations only: a new
rule's names are covered without any change here. ``tests/test_candidates.py`` checks that every rule
example gets the same findings with and without this filter.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping

from torchpatch.engine.resolve import TRACKED_ROOTS, ScopeTree, is_chain
from torchpatch.engine.source import Locator
from torchpatch.rules.base import CallNeed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from torchpatch.engine.checker import RuleIndex

# What may separate the parts of a chain: whitespace and newlines (inside brackets), line continuations, comments.
_GAP = r"(?:[\s\\]|#[^\r\n]*(?![^\r\n]))*"  # a comment runs to the end of its line: one way to match
_NEXT_PART = re.compile(_GAP + r"\." + _GAP + r"([^\W\d]\w*)")
_CLOSING_THEN_DOT = re.compile(_GAP + r"\)(?:" + _GAP + r"\))*" + _GAP + r"\.")


def bound_qualnames(scopes: ScopeTree, names: Iterable[str]) -> dict[str, set[str]]:
    """For each name: every qualified name one of its bindings (in any scope of the file) resolves to."""
    wanted = set(names)
    found: dict[str, set[str]] = {name: set() for name in wanted}
    for scope in (scopes.module_scope, *scopes.scope_of.values()):
        for name, bindings in scope.bindings.items():
            if name in wanted:
                for binding in bindings:
                    qualname = scopes.binding_qualname(binding)
                    if qualname is not None:
                        found[name].add(qualname)
    return found


def watched_mentions(text: str, bound: dict[str, set[str]], watched: frozenset[str],
                     prefixes: frozenset[str], decorators: frozenset[str] = frozenset(),
                     class_decorators: frozenset[str] = frozenset(),
                     call_gates: Mapping[str, CallNeed] | None = None) -> list[int]:
    """Offsets of the mentions of the names in ``bound`` whose chain can reach a watched qualified name.

    ``watched``: the qualified names the rules dispatch on; ``prefixes``: those and each of their dotted
    prefixes (``torch``, ``torch.cuda``, ``torch.cuda.amp``, ``torch.cuda.amp.autocast``); ``decorators``: names
    that count only in a chain written right after an ``@`` (decorator_mentions), and of them
    ``class_decorators`` only above a class; ``call_gates``: names that count only in a call that may meet
    their need (RuleIndex.call_gates, see _call_may_meet).
    """
    found = _mentions_anywhere(text, bound, watched, prefixes, call_gates)
    if decorators and "@" in text:
        found.extend(decorator_mentions(text, bound, decorators, prefixes, class_decorators))
    return found


#: ``@`` and the name that starts the chain after it (blanks, parentheses and line continuations between).
_DECORATOR_START = re.compile(r"@(?:[ \t\f(]|\\\n)*([^\W\d]\w*)")
#: What follows a decorator's chain when the statement it decorates is a function: an optional call with
#: plain arguments (no string, comment, bracket or continuation in them), the end of the line, more such
#: decorator lines or blank and comment lines, then ``def`` or ``async def``.
_DECORATES_A_FUNCTION = re.compile(
    r"(?:[ \t\f]*\([^'\"\\#()\[\]{}\r\n]*\))?[ \t\f]*(?:#[^\r\n]*)?\r?\n"
    r"(?:[ \t\f]*(?:@[^'\"\\#()\[\]{}\r\n]*(?:\([^'\"\\#()\[\]{}\r\n]*\))?[ \t\f]*)?(?:#[^\r\n]*)?\r?\n)*"
    r"[ \t\f]*(?:async[ \t\f]+)?def(?!\w)")


def decorator_mentions(text: str, bound: dict[str, set[str]], decorators: frozenset[str],
                       prefixes: frozenset[str], class_decorators: frozenset[str] = frozenset()) -> list[int]:
    """Offsets of the names in ``bound`` written right after an ``@`` whose chain can reach one of ``decorators``
    (read as watched_mentions reads a chain). More than decorators are read (``a @ b``, an e-mail address in a
    string): that only keeps more. A chain written in one piece that is only ``class_decorators`` is skipped where
    the text after it shows that it decorates a function (``_DECORATES_A_FUNCTION``)."""
    found: list[int] = []
    for at in _DECORATOR_START.finditer(text):
        name = at.group(1)
        starts = [q for q in bound.get(name, ()) if q in prefixes]
        if not starts:
            continue
        written = _mention_pattern(name).match(text, at.start(1))
        if not any(q in decorators for q in starts):
            if written is None:
                continue
            verdict = _written_verdict(written.group(1), starts, decorators, prefixes)
            if verdict is False or (verdict is not True
                                    and not _follow_chain(text, written.end(), verdict, decorators, prefixes)):
                continue
        if class_decorators and written is not None:
            ends = [q for q in _chain_end(written.group(1), starts, decorators, prefixes) or () if q in decorators]
            if ends and all(q in class_decorators for q in ends) and _DECORATES_A_FUNCTION.match(text, written.end()):
                continue
        found.append(at.start(1))
    return found


def _chain_end(written: str, starts: list[str], names: frozenset[str], prefixes: frozenset[str]) -> list[str] | None:
    """The qualified names a chain written as ``written`` after a name bound to ``starts`` is at its end (those
    still in ``prefixes``); None when one of ``names`` comes before the end (``torch.optim.Adam`` in
    ``torch.optim.Adam.step``) or a part is not ASCII (Python reads it NFKC-normalized: left to _follow_parts)."""
    if not written.isascii():
        return None
    live = starts
    for attribute in written.split(".")[1:]:
        if any(q in names for q in live):
            return None
        live = [extended for q in live if (extended := f"{q}.{attribute}") in prefixes]
    return live


def _mentions_anywhere(text: str, bound: dict[str, set[str]], watched: frozenset[str],
                       prefixes: frozenset[str], call_gates: Mapping[str, CallNeed] | None = None) -> list[int]:
    """watched_mentions without its decorators."""
    found: list[int] = []
    for name, qualnames in bound.items():
        starts = [q for q in qualnames if q in prefixes]
        if not starts:
            continue  # bound only to things no watched name starts with: no mention of it can matter
        gate = _CallGate(starts, watched, prefixes, call_gates)
        if any(q in watched for q in starts):
            after = len(name)
            found.extend(offset for offset in word_offsets_of(text, name, len(text))
                         if not gate.shuts(text, "", offset + after))
            continue
        # Each mention with the ``.attr`` parts written right after it (no gap: most of them) in one regex
        # pass; a file spells few distinct such chains, so each is followed once. Where one is still the
        # start of a watched name at its end, the rest is read as _follow_chain reads any chain.
        verdicts: dict[str, list[str] | bool] = {}
        for mention in _mention_pattern(name).finditer(text):
            written = mention.group(1)
            verdict = verdicts.get(written)
            if verdict is None:
                verdict = verdicts[written] = _written_verdict(written, starts, watched, prefixes)
            if verdict is True:
                if not gate.shuts(text, written, mention.end()):
                    found.append(mention.start())
            elif verdict is not False and _follow_chain(text, mention.end(), verdict, watched, prefixes):
                found.append(mention.start())
    return found


class _CallGate:
    """For one bound name (its qualnames ``starts``): whether a watched mention of it, its parts written as
    ``written`` up to ``end``, is a call that cannot meet the need of the gated name it is (RuleIndex.call_gates,
    _gate_of); each written chain's need is looked up once."""

    __slots__ = ("starts", "watched", "prefixes", "gates", "needs")

    def __init__(self, starts: list[str], watched: frozenset[str], prefixes: frozenset[str],
                 gates: Mapping[str, CallNeed] | None) -> None:
        self.starts, self.watched, self.prefixes, self.gates = starts, watched, prefixes, gates
        self.needs: dict[str, CallNeed | None] = {}

    def shuts(self, text: str, written: str, end: int) -> bool:
        if not self.gates or not text.startswith("(", end):
            return False
        needs = self.needs
        need = needs[written] if written in needs else needs.setdefault(
            written, _gate_of(written, self.starts, self.watched, self.prefixes, self.gates))
        return need is not None and not call_may_meet(text, end, need)


def _gate_of(written: str, starts: list[str], watched: frozenset[str], prefixes: frozenset[str],
             call_gates: Mapping[str, CallNeed]) -> CallNeed | None:
    """The need a call of the chain written as ``written`` after a name bound to ``starts`` must be able to meet,
    when every watched name the chain is at its end is gated (``call_gates``) and none comes before the end; else
    None: every such call counts."""
    reached = [q for q in _chain_end(written, starts, watched, prefixes) or () if q in watched]
    if not reached or any(q not in call_gates for q in reached):
        return None
    return CallNeed.any_of(call_gates[q] for q in reached)


#: In a call's arguments, what the scan stops at: a bracket, a comma, a quote, a comment, a line continuation.
_ARGUMENT_STOP = re.compile(r"""[()\[\]{},#\\'"]""")
#: The rest of a string after its opening quote (a backslash escapes any character, a newline included).
_STRING_END = {
    "'": re.compile(r"(?:[^\\'\n]|\\[\s\S])*'"),
    '"': re.compile(r'(?:[^\\"\n]|\\[\s\S])*"'),
    "'''": re.compile(r"(?:[^\\']|\\[\s\S]|'(?!''))*'''"),
    '"""': re.compile(r'(?:[^\\"]|\\[\s\S]|"(?!""))*"""'),
}
#: The start of one argument: ``*`` / ``**``, or a keyword's name and ``=`` (not ``==``).
_ARGUMENT_HEAD = re.compile(_GAP + r"(?:(\*\*?)|([A-Za-z_]\w*)" + _GAP + r"=(?!=))?")
_OPENING_OF = {")": "(", "]": "[", "}": "{"}
#: Words that bring commas of their own into an argument list when written at its depth: a bare generator's
#: ``for`` targets, a lambda's parameters.
_OWN_COMMAS = re.compile(r"(?<![\w.])(?:for|lambda)(?!\w)")


def call_may_meet(text: str, opening: int, need: CallNeed) -> bool:
    """Whether the call whose ``(`` is at ``opening`` may meet ``need`` (see CallNeed): False only when its
    arguments, read here as the parser reads them, surely do not; True for anything not read to the end
    (an f-string, a lambda, a string not closed on its line, no closing parenthesis)."""
    shape = _call_arguments(text, opening)
    if shape is None:
        return True
    arguments, keywords, positional, unpacked = shape
    if any(word in arguments for word in need.words):
        return True
    for parameter, position in need.passed:
        if parameter in keywords or "**" in unpacked or (
                position is not None and (positional > position or "*" in unpacked)):
            return True
    if need.counts and (positional in need.counts or "*" in unpacked):
        return True
    if need.missing:
        if "None" in arguments:
            return True  # ``dim=None`` leaves it out for torch
        for parameter, position in need.missing:
            if parameter not in keywords and (position is None or positional <= position):
                return True
    return False


def _call_arguments(text: str, opening: int) -> tuple[str, frozenset[str], int, frozenset[str]] | None:
    """The call's parenthesized text, its keywords' names, how many arguments it passes by position before any
    unpacking, and which unpackings (``*``, ``**``) it holds; None where the text is not read to its end here."""
    heads = [opening + 1]  # where each argument starts
    brackets: list[str] = []
    position = opening
    while True:
        stop = _ARGUMENT_STOP.search(text, position)
        if stop is None:
            return None
        if len(brackets) == 1 and _OWN_COMMAS.search(text, position, stop.start()):
            return None  # ``f(v for k, v in d)``, ``f(key=lambda a, b: a)``: commas that do not part arguments
        character = stop.group()
        position = stop.end()
        if character in "([{":
            brackets.append(character)
        elif character in ")]}":
            if not brackets or brackets.pop() != _OPENING_OF[character]:
                return None
            if not brackets:
                break
        elif character == ",":
            if len(brackets) == 1:
                heads.append(position)
        elif character == "#":
            position = text.find("\n", position)
            if position == -1:
                return None
        elif character == "\\":
            if not text.startswith("\n", position):
                return None
            position += 1
        else:
            start = stop.start()
            prefix_start = start
            while prefix_start and text[prefix_start - 1] in _PREFIX_LETTERS:
                prefix_start -= 1
            if prefix_start < start:
                before = text[prefix_start - 1] if prefix_start else " "
                if before.isalnum() or before == "_" or not set(text[prefix_start:start].lower()) <= {"r", "b", "u"}:
                    return None  # an f- or t-string, whose braces hold code: not read here
            quote = character * 3 if text.startswith(character * 3, start) else character
            end = _STRING_END[quote].match(text, start + len(quote))
            if end is None:
                return None
            position = end.end()
    keywords: set[str] = set()
    unpacked: set[str] = set()
    positional = 0
    for head, end in zip(heads, [*heads[1:], position]):
        segment = text[head:end - 1]
        if not segment.isascii():
            return None  # a name Python reads NFKC-normalized
        match = _ARGUMENT_HEAD.match(segment)
        if match.group(1):
            unpacked.add(match.group(1))
        elif match.group(2):
            keywords.add(match.group(2))
        elif match.end() < len(segment) and not unpacked:
            positional += 1
    return text[opening:position], frozenset(keywords), positional, frozenset(unpacked)


_PREFIX_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


@functools.lru_cache(maxsize=1024)
def _mention_pattern(name: str) -> re.Pattern:
    """``name`` as a whole identifier (as word_offsets_of finds it: a word character is what ``\\w``
    matches, alphanumeric or ``_``), then its ``.attr`` parts written without a gap (group 1). The name
    comes first, so that the regex engine searches for it as a literal."""
    escaped = re.escape(name)
    return re.compile(rf"{escaped}(?<!\w{escaped})(?!\w)((?:\.[^\W\d]\w*)*)")


def _written_verdict(written: str, starts: list[str], watched: frozenset[str],
                     prefixes: frozenset[str]) -> list[str] | bool:
    """_follow_parts of a mention's ``.attr`` parts written without a gap (``_mention_pattern``'s group 1)."""
    return _follow_parts(written.split(".")[1:], starts, watched, prefixes) if written else starts


def _follow_parts(attributes: list[str], live: list[str], watched: frozenset[str],
                  prefixes: frozenset[str]) -> list[str] | bool:
    """The chain's qualified names after ``attributes``: True once one is watched, False once none starts a
    watched name, else those that still do."""
    for attribute in attributes:
        if not attribute.isascii():
            attribute = unicodedata.normalize("NFKC", attribute)  # as Python reads identifiers
        live = [extended for q in live if (extended := f"{q}.{attribute}") in prefixes]
        if not live:
            return False
        if any(q in watched for q in live):
            return True
    return live


def _follow_chain(text: str, position: int, live: list[str], watched: frozenset[str],
                  prefixes: frozenset[str]) -> bool:
    """Whether the chain read on from ``position`` (with any gap between its parts), whose qualified names so
    far are ``live`` (each the start of a watched name), can reach a watched name."""
    verdict, end = _read_chain(text, position, live, watched, prefixes)
    if verdict is True or verdict is False:
        return verdict
    # The chain ends here while it can still become a watched name: kept when a closing
    # parenthesis and a dot follow, since the syntax tree's chain may go on there.
    return _CLOSING_THEN_DOT.match(text, end) is not None


def _read_chain(text: str, position: int, live: list[str], watched: frozenset[str],
                prefixes: frozenset[str]) -> tuple[list[str] | bool, int]:
    """The chain's parts read on from ``position`` until one makes it watched (True) or no watched name's start
    (False), or it ends (the names still live): that verdict, and where the reading stopped."""
    while True:
        part = _NEXT_PART.match(text, position)
        if part is None:
            return live, position
        position = part.end()
        live = _follow_parts([part.group(1)], live, watched, prefixes)
        if live is True or live is False:
            return live, position


def word_offsets_of(text: str, name: str, end: int) -> list[int]:
    """Offsets where ``name`` occurs as a whole identifier (str.find is several times faster than a regex)."""
    found = []
    length = len(name)
    index = text.find(name)
    while index != -1:
        after = index + length
        # A word character is alphanumeric or ``_`` (inlined: this loop sees every ``torch`` of the file).
        before = text[index - 1] if index else " "
        if not (before.isalnum() or before == "_"):
            following = text[after] if after < end else " "
            if not (following.isalnum() or following == "_"):
                found.append(index)
        index = text.find(name, after)
    return found


def rows_of(text: str, offsets: list[int]) -> list[int]:
    """The sorted distinct 1-based rows of ``offsets`` (sorted in place)."""
    offsets.sort()
    if "\r" in text:  # lone CR is a line break for Python too: use the full line table
        line_starts = Locator(text).line_starts
        return sorted({bisect.bisect_right(line_starts, offset) for offset in offsets})
    rows = []
    row, previous = 1, 0
    for offset in offsets:
        row += text.count("\n", previous, offset)
        previous = offset
        if not rows or rows[-1] != row:
            rows.append(row)
    return rows


# -- files the walker would see nothing of ----------------------------------------------------------
# With the scope tree, the candidate rows of a file are the rows of its watched mentions and of its imports
# (checker._candidate_rows), and the walker visits a statement or a compound statement's header only when one
# of those rows falls inside it. So when every candidate row is an import row, no rule watches anything those
# imports name, and no other statement or header covers an import row, the walker visits the imports alone
# and reports nothing: pass 1 (the scope tree, the guard classification) need not run at all. That is most
# files of a large tree. Everything here is read off the syntax tree and the text, without resolving a name:
# what the scope tree would bind is over-approximated (every binding of every scope, aliases followed
# without regard to shadowing or order), which can only keep more rows, so only ever walk more.

#: Statements that hold no statements and bind no name through an import or an alias.
_LEAVES = frozenset({ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Pass, ast.Break, ast.Continue, ast.Delete,
                     ast.AugAssign, ast.Global, ast.Nonlocal})
_IMPORTS = (ast.Import, ast.ImportFrom)
_TRY_STATEMENTS = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def _dotted_prefixes(dotted: str) -> Iterable[str]:
    parts = dotted.split(".")
    return (".".join(parts[:i]) for i in range(1, len(parts) + 1))


def _import_reaches_a_rule(node: ast.Import | ast.ImportFrom, references: dict) -> bool:
    """Whether the walker's import visit (checker._Walker._visit_import) can hand this import to a rule."""
    if type(node) is ast.Import:
        return any(alias.name.split(".")[0] in TRACKED_ROOTS and any(p in references for p in _dotted_prefixes(alias.name))
                   for alias in node.names)
    module = node.module
    if node.level or not module or module.split(".")[0] not in TRACKED_ROOTS:
        return False
    return any(p in references for p in _dotted_prefixes(module)) \
        or any(f"{module}.{alias.name}" in references for alias in node.names)


def _header(node: ast.stmt) -> list[ast.AST]:
    """Every expression the walker may visit as the header of a compound statement (checker._split_statement's
    header, or more: version checks and fallback handlers are not told apart here)."""
    kind = type(node)
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
        arguments = node.args
        return [*node.decorator_list, *arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    if kind is ast.ClassDef:
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    if kind in (ast.If, ast.While):
        return [node.test]
    if kind in (ast.For, ast.AsyncFor):
        return [node.iter]
    if kind in (ast.With, ast.AsyncWith):
        return [item.context_expr for item in node.items]
    if kind in _TRY_STATEMENTS:
        from torchpatch.engine.guards import catches_missing_api

        return [h.type for h in node.handlers if h.type is not None and not catches_missing_api(h)]
    if kind is ast.Match:
        return [node.subject, *(c.guard for c in node.cases if c.guard is not None)]
    return [node]


#: The statement lists of the compound statements that hold them in fields of their own.
_BODY_FIELDS = {ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
                ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
                ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",)}


def _bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds (those pass 1 visits)."""
    kind = type(node)
    if kind in _TRY_STATEMENTS:
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    if kind is ast.Match:
        return [case.body for case in node.cases]
    return [body for body in (getattr(node, "body", None), getattr(node, "orelse", None)) if body]


class Mentions:
    """What :func:`nothing_to_walk` found on its way, for checker._candidate_rows to reuse when it holds exactly.

    ``rows``, for a file that is walked, are its candidate rows read without the scope tree: the rows
    checker._candidate_rows computes with it, or more. The import rows, the method and attribute offsets and
    the tracked names (``_tracked`` is checker._tracked_names's set) are the same; the watched mentions are
    those of qualnames that follow aliases through every binding of their root (a superset of
    bound_qualnames' answer, and watched_mentions only keeps more for more). More rows only make the walker
    visit statements in which no chain reaches a watched name, where no rule is triggered."""

    __slots__ = ("names", "qualnames", "watched", "others", "rows")

    def __init__(self) -> None:
        self.names: set[str] | None = None  # checker._tracked_names's answer (the same set, see _tracked)
        self.qualnames: dict[str, set[str]] = {}  # per name, the qualnames watched_mentions was given
        self.watched: list[int] | None = None  # watched_mentions(text, qualnames, ...)
        self.others: list[int] | None = None  # the watched methods' and assigned attributes' offsets
        self.rows: list[int] | None = None

    def watched_offsets(self, bound: dict[str, set[str]], prefixes: frozenset[str]) -> list[int] | None:
        """The watched mentions for ``bound`` when they were found for the same qualnames (those starting a
        watched name, the only ones watched_mentions looks at), else None."""
        if self.watched is None or set(bound) != self.names:
            return None
        for name, qualnames in bound.items():
            if {q for q in qualnames if q in prefixes} != self.qualnames.get(name, set()):
                return None
        return self.watched


def nothing_to_walk(text: str, tree: ast.Module, index: "RuleIndex",
                    star_exports: Callable[[str], frozenset[str] | None], found: Mentions | None = None) -> bool:
    """True when the walker would visit nothing but imports no rule watches (see above): no finding is possible.
    ``found``, when given, keeps the mentions read on the way, and for a file that is walked its candidate rows
    (``found.rows``, see :func:`candidate_rows`)."""
    references = index.references
    imports: list[ast.stmt] = []
    compounds: list[ast.stmt] = []
    bound: dict[str, set[str]] = {}  # name -> tracked qualnames its import bindings give it
    aliases: list[tuple[str, str, str]] = []  # ``name = root.a.b``: (name, root, ".a.b")
    walked = False  # known to be walked: the statements are still read, for the candidate rows
    blocks = [tree.body]
    while blocks:
        body = blocks.pop()
        for position, statement in enumerate(body):
            kind = type(statement)
            if kind in _LEAVES:
                continue
            if kind is ast.Assign or kind is ast.AnnAssign:
                value = statement.value
                if type(value) is ast.Attribute or type(value) is ast.Name:  # else no alias, nothing to learn
                    if kind is ast.Assign:
                        targets = statement.targets
                        target = targets[0] if len(targets) == 1 else None
                    else:
                        target = statement.target
                    if type(target) is ast.Name and is_chain(value):
                        root, parts = value, []
                        while type(root) is ast.Attribute:
                            parts.append(root.attr)
                            root = root.value
                        aliases.append((target.id, root.id, "".join(f".{part}" for part in reversed(parts))))
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                if not walked:
                    row = statement.lineno
                    # Another statement on the import's row (``import os; x.cuda()``) is walked with it.
                    walked = _import_reaches_a_rule(statement, references) \
                        or (position > 0 and type(body[position - 1]) not in _IMPORTS and body[position - 1].end_lineno >= row) \
                        or (position + 1 < len(body) and type(body[position + 1]) not in _IMPORTS and body[position + 1].lineno <= row)
                imports.append(statement)
                _import_bindings(statement, bound, star_exports)
                continue
            compounds.append(statement)
            holders = _BODY_FIELDS.get(kind)
            if holders is None:
                blocks.extend(_bodies(statement))
            else:
                for holder in holders:
                    inner = getattr(statement, holder)
                    if inner:
                        blocks.append(inner)
    import_rows = sorted({statement.lineno for statement in imports})
    if not import_rows:
        return True  # check_tree returns at once for a file with no import and no candidate row
    names = _tracked(bound, aliases)
    found = found if found is not None else Mentions()
    found.names = names
    rows: set[int] = set()
    if names:
        qualnames = _alias_qualnames(bound, aliases, index.watched_prefixes)
        found.qualnames = {name: qualnames.get(name, set()) for name in names}
        found.watched = watched_mentions(text, found.qualnames, index.watched_in(text), index.watched_prefixes,
                                         index.decorator_names, index.class_decorator_names, index.call_gates)
        watched_rows = rows_of(text, list(found.watched)) if found.watched else []
        offsets = index.method_offsets(text, mentioned=bool(found.watched))
        attribute_offsets = []
        if index.attributes:
            end = len(text)
            attribute_offsets = [offset for name in index.attributes for offset in word_offsets_of(text, name, end)]
        found.others = offsets + attribute_offsets
        rows.update(watched_rows)
        if found.others:
            rows.update(rows_of(text, found.others))
    deciding = rows
    if names and watched_rows and not walked and _all_in_imports(watched_rows, imports):
        # Watched names mentioned only inside import statements, which nothing_to_walk_by_text does not count
        # either: such an import is no use to a rule (else ``walked``), nor are the methods that every rule
        # watching them sees only in a file with a watched mention.
        deciding = set(rows_of(text, index.method_offsets(text, mentioned=False) + attribute_offsets))
    walked = walked or not deciding.issubset(import_rows) or _header_holds_an_import_row(compounds, import_rows)
    if walked:
        found.rows = sorted(rows.union(import_rows))
    return not walked


def _all_in_imports(rows: list[int], imports: list[ast.stmt]) -> bool:
    """Whether every row of ``rows`` lies within an import statement (from its first row to its last)."""
    spans = sorted((statement.lineno, statement.end_lineno) for statement in imports)
    starts = [start for start, _ in spans]
    for row in rows:
        at = bisect.bisect_right(starts, row) - 1
        if at < 0 or row > spans[at][1]:
            return False
    return True


def _header_holds_an_import_row(compounds: list[ast.stmt], import_rows: list[int]) -> bool:
    """A header whose rows hold an import row is walked (``try:`` ... ``except Error:`` spans its body)."""
    for statement in compounds:
        first = getattr(statement, "decorator_list", None)
        first = min(statement.lineno, *(d.lineno for d in first)) if first else statement.lineno
        at = bisect.bisect_left(import_rows, first)
        if at == len(import_rows) or import_rows[at] > statement.end_lineno:
            continue  # no import row anywhere in the statement
        header = _header(statement)
        if header:
            low = min(statement.lineno, *(getattr(n, "lineno", statement.lineno) for n in header))
            high = max(getattr(n, "end_lineno", statement.lineno) or statement.lineno for n in header)
            at = bisect.bisect_left(import_rows, low)
            if at < len(import_rows) and import_rows[at] <= high:
                return True
    return False


def _import_bindings(node: ast.Import | ast.ImportFrom, bound: dict[str, set[str]],
                     star_exports: Callable[[str], frozenset[str] | None]) -> None:
    """The tracked qualified names an import binds (as ScopeTree binds them; other names are no use here)."""
    if type(node) is ast.Import:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in TRACKED_ROOTS:
                if alias.asname:
                    bound.setdefault(alias.asname, set()).add(alias.name)
                else:
                    bound.setdefault(root, set()).add(root)
        return
    module = node.module
    if node.level or not module or module.split(".")[0] not in TRACKED_ROOTS:
        if node.names[0].name == "*":
            bound.setdefault("torch", set()).add("torch")  # as ScopeTree._bind_star binds it
        return
    for alias in node.names:
        if alias.name == "*":
            names = star_exports(module) if module.split(".")[0] == "torch" else None
            for name in names or ():
                bound.setdefault(name, set()).add(f"{module}.{name}")
        else:
            bound.setdefault(alias.asname or alias.name, set()).add(f"{module}.{alias.name}")


def _tracked(bound: dict[str, set[str]], aliases: list[tuple[str, str, str]]) -> set[str]:
    """checker._tracked_names from the import bindings and aliases alone (the same set: no lookup is involved)."""
    names = set(bound)
    changed = True
    while changed:
        changed = False
        for name, root, _ in aliases:
            if name not in names and root in names:
                names.add(name)
                changed = True
    return names


def _alias_qualnames(bound: dict[str, set[str]], aliases: list[tuple[str, str, str]],
                     prefixes: frozenset[str]) -> dict[str, set[str]]:
    """For each name, every qualified name that starts a watched one and that one of its bindings may resolve
    to, following aliases through any binding of their root (a superset of bound_qualnames' answer)."""
    qualnames = {name: {q for q in found if q in prefixes} for name, found in bound.items()}
    changed = True
    while changed:  # finite: every set stays inside ``prefixes``
        changed = False
        for name, root, suffix in aliases:
            for base in tuple(qualnames.get(root, ())):
                extended = base + suffix
                if extended in prefixes:
                    found = qualnames.setdefault(name, set())
                    if extended not in found:
                        found.add(extended)
                        changed = True
    return qualnames


# -- files decided from their text alone ------------------------------------------------------------
# nothing_to_walk reads the syntax tree, so the file was parsed for it; symtable checks that a file parses for
# about 70% of ast.parse's CPU and frees nothing afterwards. nothing_to_walk_by_text answers the same question
# from the text: it finds every import statement the tree can hold, and says True only when nothing_to_walk
# would say True, reading no tree: no import reaches a rule, no mention of an imported name reaches a watched
# name, no watched method or assigned attribute is written, and no statement can make an alias of an imported
# name. Anything it cannot read for certain (a line continuation, ``;``, a compound statement on one line, a
# ``try`` or ``match`` that could hold an import in its header's rows, a non-ASCII import, a lone CR) makes it
# answer False, "unknown": the file is parsed and decided from its tree as before. Over-reading (an import
# written in a docstring is taken for one) only keeps more names, so it only answers False more often.

# The keyword first, then the look-behind: the regex engine then searches for it as a literal.
_IMPORT_KEYWORD = re.compile(r"import(?<!\wimport)(?!\w)")
_BLANK = "[ \t\f]*"
_DOTTED = r"[A-Za-z_]\w*(?:[ \t\f]*\.[ \t\f]*[A-Za-z_]\w*)*"
_FROM_PREFIX = re.compile(rf"{_BLANK}from(?!\w){_BLANK}((?:\.{_BLANK})*)({_DOTTED})?{_BLANK}")
_AS = rf"(?:[ \t\f]+as[ \t\f]+([A-Za-z_]\w*))?"
_IMPORTED_MODULES = re.compile(rf"{_BLANK}({_DOTTED}){_AS}{_BLANK}")
_IMPORTED_NAMES = re.compile(rf"\s*([A-Za-z_]\w*){_AS}\s*")
_COMMENT = re.compile(r"#[^\n]*")
_PARENTHESISED = re.compile(r"\(((?:[^)#]|#[^\n]*)*)\)")
_LINE_REST = re.compile(rf"{_BLANK}(?:#[^\n]*)?(?:\n|$)")
_OPENING = re.compile(_BLANK + r"\(")
_EXCEPT_KEYWORD = re.compile(r"except(?<!\wexcept)(?!\w)")
_TRY_KEYWORD = re.compile(r"try(?<!\wtry)(?!\w)")
_MATCH_LINE = re.compile(r"^[ \t\f]*match(?!\w)(?![ \t\f]*[=.])", re.MULTILINE)


def _comma_list(text: str, pattern: re.Pattern) -> list[re.Match] | None:
    """``text`` read as ``pattern`` items separated by commas (a trailing comma allowed), or None."""
    items = []
    for piece in text.split(","):
        if not piece.strip() and items:
            continue  # a trailing comma (inside parentheses; a stray one fails to parse later anyway)
        match = pattern.fullmatch(piece)
        if match is None:
            return None
        items.append(match)
    return items


def _text_imports(text: str) -> tuple[list[ast.stmt], list[tuple[int, int]], bool] | None:
    """Every import statement the syntax tree of ``text`` can hold, read off the text (and maybe more: one in a
    docstring is taken for one), with the span of each and whether any is indented; None when an import may be
    written in a way this does not read."""
    statements: list[ast.stmt] = []
    spans: list[tuple[int, int]] = []
    indented = False
    for keyword in _IMPORT_KEYWORD.finditer(text):
        start = keyword.start()
        line_start = text.rfind("\n", 0, start) + 1
        prefix = text[line_start:start]
        if line_start >= 2 and text[line_start - 2] == "\\":
            return None  # the line continues the one before it: the statement may have begun there
        if not prefix.isascii():
            return None  # a module or keyword spelled with characters the parser NFKC-normalises (``ｆrom``)
        if not prefix.strip(" \t\f"):
            source = None
        else:
            source = _FROM_PREFIX.fullmatch(prefix)
            if source is None:
                if ";" in prefix or ":" in prefix:
                    return None  # maybe a statement after another one on the line (``if x: import y``)
                continue  # in a comment or a string: no statement starts here
        indented = indented or prefix[:1] in (" ", "\t", "\f")
        position = keyword.end()
        opening = _OPENING.match(text, position) if source is not None else None
        if opening is not None:
            group = _PARENTHESISED.match(text, opening.end() - 1)
            if group is None:
                return None
            listed = group.group(1)
            if "#" in listed:
                listed = _COMMENT.sub("", listed)
            after = _LINE_REST.match(text, group.end())
            if after is None:
                return None  # something follows the closing parenthesis on its line (``; x()``)
            end = after.end()
        else:
            newline = text.find("\n", position)
            end = len(text) if newline == -1 else newline + 1
            listed = text[position:end]
            if "#" in listed:
                listed = _COMMENT.sub("", listed)
            listed = listed.rstrip()
            if listed.endswith("\\") or ";" in listed:
                return None
        if not listed.isascii():
            return None  # identifiers are NFKC-normalised by the parser: left to it
        if source is None:
            items = _comma_list(listed, _IMPORTED_MODULES)
            if items is None:
                return None
            statements.append(ast.Import(names=[ast.alias(name=_undotted(m.group(1)), asname=m.group(2))
                                                for m in items]))
        else:
            level = source.group(1).count(".")
            module = _undotted(source.group(2)) if source.group(2) else None
            if listed.strip() == "*":
                names = [ast.alias(name="*", asname=None)]
            else:
                items = _comma_list(listed, _IMPORTED_NAMES)
                if items is None:
                    return None
                names = [ast.alias(name=m.group(1), asname=m.group(2)) for m in items]
            statements.append(ast.ImportFrom(module=module, names=names, level=level))
        spans.append((line_start, end))
    return statements, spans, indented


def _undotted(dotted: str) -> str:
    return "".join(dotted.split())


@functools.lru_cache(maxsize=None)
def _missing_api_handler() -> re.Pattern:
    """``except`` with no type, or with types guards.catches_missing_api accepts (written as plain names, on one
    line): a handler nothing_to_walk's headers leave out."""
    from torchpatch.engine.guards import FALLBACK_EXCEPTIONS

    name = "(?:" + "|".join(sorted(FALLBACK_EXCEPTIONS)) + ")"
    return re.compile(rf"except(?!\w){_BLANK}(?::|\(?{_BLANK}{name}(?:{_BLANK},{_BLANK}{name})*{_BLANK}\)?{_BLANK}"
                      rf"(?:as{_BLANK}\w+{_BLANK})?:)")


def _headers_may_hold_imports(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the header of a ``try`` or a ``match`` may span the row of an indented import (``spans``, as
    _text_imports gives them). A try's header (_header) runs from its ``try`` to the last handler that
    nothing_to_walk's headers keep, so such an import lies after some ``try`` and before some such ``except``;
    a match's guards come after the bodies of the cases before them."""
    indented = [start for start, _ in spans if text[start] in " \t\f"]
    if not indented:
        return False
    if "match" in text and _MATCH_LINE.search(text, 0, indented[-1]) is not None:
        return True
    first_try = _TRY_KEYWORD.search(text, 0, indented[-1])
    if first_try is None:
        return False
    after = first_try.start()
    first_import = next((start for start in indented if start > after), None)
    if first_import is None:
        return False
    handler_pattern = _missing_api_handler()
    return any(handler_pattern.match(text, handler.start()) is None
               for handler in _EXCEPT_KEYWORD.finditer(text, first_import))


def _may_be_alias_value(text: str, start: int, end: int) -> bool:
    """Whether the chain written at ``start:end`` may be the whole value of ``name = chain`` (an alias, which
    nothing_to_walk follows): an ``=`` (not ``==``, ``<=``, ...) before it, with blanks and ``(`` between, and
    nothing after it but blanks, then the end of the line, a comment, ``;``, ``)``, ``\\`` or ``.``. Across a
    line break either way it may be: the answer is then yes."""
    after = end
    while after < len(text) and text[after] in " \t\f":
        after += 1
    if after < len(text) and text[after] not in "\n#;)\\.":
        return False
    before = start - 1
    while before >= 0 and text[before] in " \t\f(":
        before -= 1
    if before < 0:
        return False
    if text[before] == "\n":
        return True
    return text[before] == "=" and (before == 0 or text[before - 1] not in "=!<>")


def nothing_to_walk_by_text(text: str, index: "RuleIndex", star_exports: Callable[[str], frozenset[str] | None]) -> bool:
    """True when nothing_to_walk of this text's tree would be True, decided without the tree; False when it may
    not be (see above). For a file that mentions no method name ``index.definitions`` holds."""
    if "\r" in text:
        return False  # a lone CR ends a line for the parser, not for these patterns
    if index.has_method_call(text, mentioned=False):
        return False  # first: one pass that settles most of the files that are walked
    found = _text_imports(text)
    if found is None:
        return False
    statements, spans, indented = found
    if not statements:
        return True  # nothing_to_walk: no import row
    if indented and _headers_may_hold_imports(text, spans):
        return False
    references = index.references
    bound: dict[str, set[str]] = {}
    for statement in statements:
        if _import_reaches_a_rule(statement, references):
            return False
        _import_bindings(statement, bound, star_exports)
    if not bound:
        return True  # no name is tracked: nothing_to_walk computes no candidate row
    watched, prefixes, gates = index.watched_in(text), index.watched_prefixes, index.call_gates
    span_starts = [span[0] for span in spans]

    def in_an_import(offset: int) -> bool:
        at = bisect.bisect_right(span_starts, offset) - 1
        return at >= 0 and offset < spans[at][1]

    for name, qualnames in bound.items():
        starts = [q for q in qualnames if q in prefixes]
        if not starts:
            continue
        gate = _CallGate(starts, watched, prefixes, gates)
        if any(q in watched for q in starts):
            # Every mention of the name is watched (its import's own is an import row): a candidate unless it
            # is a call its gate shuts (_mentions_anywhere).
            after = len(name)
            if any(not (in_an_import(offset) or gate.shuts(text, "", offset + after))
                   for offset in word_offsets_of(text, name, len(text))):
                return False
            continue
        for mention in _mention_pattern(name).finditer(text):
            written = mention.group(1)
            live = _written_verdict(written, starts, watched, prefixes)
            if live is True:
                if gate.shuts(text, written, mention.end()):
                    continue
                return False
            if live is False:
                continue
            live, position = _read_chain(text, mention.end(), live, watched, prefixes)
            if live is True:
                return False
            if live is False:
                continue
            if _CLOSING_THEN_DOT.match(text, position) is not None:
                return False  # a watched mention for nothing_to_walk
            if in_an_import(mention.start()):
                continue  # part of an import statement
            if _may_be_alias_value(text, mention.start(), position):
                return False
    if index.decorator_names and "@" in text and decorator_mentions(text, bound, index.decorator_names, prefixes,
                                                                     index.class_decorator_names):
        return False
    end = len(text)
    return not any(word_offsets_of(text, name, end) for name in index.attributes)
