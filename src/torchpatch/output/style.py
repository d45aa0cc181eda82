"""Colour for the human formats: only on a terminal, never with NO_COLOR, always with FORCE_COLOR."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from typing import TextIO

_RESET = "\033[0m"


def colour_wanted(stream: TextIO) -> bool:
    """The no-color.org and force-color.org conventions: a non-empty NO_COLOR wins, then FORCE_COLOR."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Style:
    """ANSI styles for each part of a finding; every method returns the text unchanged when colour is off."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled

    def _wrap(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}{_RESET}" if self.enabled and text else text

    def path(self, text: str) -> str:
        return self._wrap(text, "1")

    def code(self, text: str) -> str:
        return self._wrap(text, "1;31")

    def fixable(self, text: str) -> str:
        return self._wrap(text, "36")

    def gutter(self, text: str) -> str:
        return self._wrap(text, "1;34")

    def caret(self, text: str) -> str:
        return self._wrap(text, "1;31")

    def help(self, text: str) -> str:
        return self._wrap(text, "1;36")

    def summary(self, text: str) -> str:
        return self._wrap(text, "1")
