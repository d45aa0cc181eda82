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

import re
import unicodedata
from typing import Iterable

from torchpatch.engine.resolve import ScopeTree

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


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"


def watched_mentions(text: str, bound: dict[str, set[str]], watched: frozenset[str],
                     prefixes: frozenset[str]) -> list[int]:
    """Offsets of the mentions of the names in ``bound`` whose chain can reach a watched qualified name.

    ``watched``: the qualified names the rules dispatch on; ``prefixes``: those and each of their dotted
    prefixes (``torch``, ``torch.cuda``, ``torch.cuda.amp``, ``torch.cuda.amp.autocast``).
    """
    found: list[int] = []
    end = len(text)
    for name, qualnames in bound.items():
        starts = [q for q in qualnames if q in prefixes]
        if not starts:
            continue  # bound only to things no watched name starts with: no mention of it can matter
        if any(q in watched for q in starts):
            found.extend(word_offsets_of(text, name, end))
            continue
        length = len(name)
        for index in word_offsets_of(text, name, end):
            live = starts
            position = index + length
            while True:
                part = _NEXT_PART.match(text, position)
                if part is None:
                    # The chain ends here while it can still become a watched name: kept when a closing
                    # parenthesis and a dot follow, since the syntax tree's chain may go on there.
                    if _CLOSING_THEN_DOT.match(text, position):
                        found.append(index)
                    break
                position = part.end()
                attribute = part.group(1)
                if not attribute.isascii():
                    attribute = unicodedata.normalize("NFKC", attribute)  # as Python reads identifiers
                live = [extended for q in live if (extended := f"{q}.{attribute}") in prefixes]
                if not live:
                    break
                if any(q in watched for q in live):
                    found.append(index)
                    break
    return found


def word_offsets_of(text: str, name: str, end: int) -> list[int]:
    """Offsets where ``name`` occurs as a whole identifier (str.find is several times faster than a regex)."""
    found = []
    length = len(name)
    index = text.find(name)
    while index != -1:
        after = index + length
        if (index == 0 or not _is_word_character(text[index - 1])) and (
                after >= end or not _is_word_character(text[after])):
            found.append(index)
        index = text.find(name, after)
    return found
