"""A regular expression compiled on first use: a small module of its own, importable without the syntax
helpers (which import ast: 2 ms a warm rerun never needs)."""

from __future__ import annotations

import re


class LazyPattern:
    """A regular expression compiled on first use (``re.compile``'s methods, forwarded): a pattern only some runs
    need (notebooks, ``noqa`` comments) costs a one-file check nothing at start-up (issue 27)."""

    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags, self._compiled = pattern, flags, None

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return getattr(self._compiled, name)
