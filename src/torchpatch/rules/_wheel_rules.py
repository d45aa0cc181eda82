"""What the generic, wheel-driven rules (TP104, TP105, TP106, TP206, TP207, TP902) share.

Each watches names read from ``rules/data/api_db.json.gz`` (see ``rules/_api_db.py``). A name that a
hand-written rule or an API-table row already watches is left to that rule, which knows the fix.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: TP209 and TP216 read data/warning_sites.json.gz; TP216 takes the loss reductions from TP209 itself.
_GENERIC_CODES = frozenset({"TP104", "TP105", "TP106", "TP206", "TP207", "TP209", "TP216", "TP902"})
#: Rules that watch a name for another purpose than its deprecation: TP131 (legacy forward) and TP228
#: (ctx.saved_variables) read subclasses of torch.autograd.Function, while building a Function itself is
#: TP206's wheel deprecation.
_NOT_COVERING_CODES = frozenset({"TP131", "TP228"})


class LazyNames:
    """A class attribute computed on first use, so the database loads only when a rule index needs it: a
    frozenset of names, or what ``kind`` makes of ``compute()`` (``dict`` for ``Rule.call_needs``)."""

    def __init__(self, compute, kind=frozenset) -> None:
        self._compute = compute
        self._kind = kind
        self._value = None

    def __get__(self, instance, owner):
        if self._value is None:
            self._value = self._kind(self._compute())
        return self._value


@lru_cache(maxsize=1)
def watched_by_other_rules() -> frozenset[str]:
    """Qualified names (and their parents) that the hand-written rules and table rows watch."""
    from torchpatch.rules import all_rules
    from torchpatch.rules._manifest import building, rule_facts

    names: set[str] = set()
    for rule in all_rules() if building() else rule_facts():  # the manifest: watched names without importing rules
        if rule.code in _GENERIC_CODES or rule.code in _NOT_COVERING_CODES:
            continue
        names.update(rule.references_to)
        names.update(rule.calls)
    return frozenset(names)


def covered(qualname: str) -> bool:
    """Whether a hand-written rule watches this name or a module above it."""
    watched = watched_by_other_rules()
    parts = qualname.split(".")
    return any(".".join(parts[:cut]) in watched for cut in range(len(parts), 1, -1))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_FIELD = re.compile(r"\{[^{}]*\}")


def shorten(message: str, limit: int = 160) -> str:
    """torch's warning text, first sentence (or two when the first is short), one line."""
    # An f-string's fields as the wheel's source spells them ("{self.__class__} should not be instantiated").
    text = _FIELD.sub("…", " ".join(message.split())).strip()
    sentences = _SENTENCE_END.split(text)
    short = sentences[0]
    if len(short) < 50 and len(sentences) > 1:
        short = f"{short} {sentences[1]}"
    if len(short) > limit:
        short = short[: limit - 1].rstrip() + "…"
    return short.rstrip()


def _callable_name(site: str) -> str:
    return site[: -len(".__init__")] if site.endswith(".__init__") else site


@lru_cache(maxsize=1)
def keyword_changes_by_callable() -> dict[str, dict[str, dict]]:
    """Callable as user code names it (a class for its ``__init__``) → keyword → changes."""
    from torchpatch.rules import _api_db

    found: dict[str, dict[str, dict]] = {}
    for site, keywords in _api_db.keyword_changes().items():
        found.setdefault(_callable_name(site), {}).update(keywords)
    return found


def callables_with(kind: str) -> set[str]:
    return {name for name, keywords in keyword_changes_by_callable().items()
            if any(kind in change for change in keywords.values()) and not covered(name)}
