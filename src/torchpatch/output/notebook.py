"""Where a notebook cell's lines are in the .ipynb file itself (CI annotations need lines of the file)."""

from __future__ import annotations

import json
from functools import lru_cache

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"


class _Scanner:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.at = 0

    def skip(self) -> None:
        while self.at < len(self.raw) and self.raw[self.at] in _WHITESPACE:
            self.at += 1

    def expect(self, char: str) -> None:
        self.skip()
        if self.raw[self.at] != char:
            raise ValueError(f"expected {char!r} at {self.at}")
        self.at += 1

    def peek(self) -> str:
        self.skip()
        return self.raw[self.at]

    def value(self):
        self.skip()
        value, self.at = _DECODER.raw_decode(self.raw, self.at)
        return value

    def line(self) -> int:
        return self.raw.count("\n", 0, self.at) + 1

    def members(self):
        """Yield each key of the object at the cursor, leaving the cursor at its value."""
        self.expect("{")
        if self.peek() == "}":
            self.at += 1
            return
        while True:
            key = self.value()
            self.expect(":")
            self.skip()
            start = self.at
            yield key
            if self.at == start:  # the caller did not read the value
                self.value()
            if self.peek() == ",":
                self.at += 1
                continue
            self.expect("}")
            return

    def elements(self):
        self.expect("[")
        if self.peek() == "]":
            self.at += 1
            return
        while True:
            self.skip()
            start = self.at
            yield
            if self.at == start:
                self.value()
            if self.peek() == ",":
                self.at += 1
                continue
            self.expect("]")
            return


@lru_cache(maxsize=32)
def notebook_line_numbers(raw: str) -> dict[int, list[int]]:
    """cell index → the 1-based line of the .ipynb file on which each of the cell's source lines starts.

    A ``source`` stored as a list (the usual layout) has one JSON string per line; one stored as a single
    string puts every line on the line of that string. An unexpected layout gives an empty mapping.
    """
    scanner = _Scanner(raw)
    lines: dict[int, list[int]] = {}
    try:
        for key in scanner.members():
            if key != "cells":
                continue
            for index, _ in enumerate(scanner.elements()):
                if scanner.peek() != "{":
                    continue
                for cell_key in scanner.members():
                    if cell_key != "source":
                        continue
                    if scanner.peek() == "[":
                        rows: list[int] = []
                        for _ in scanner.elements():
                            scanner.skip()
                            row = scanner.line()
                            part = scanner.value()
                            part = str(part)
                            rows.extend([row] * (part.count("\n") + (0 if part.endswith("\n") or not part else 1)))
                        lines[index] = rows
                    else:
                        scanner.skip()
                        row = scanner.line()
                        text = scanner.value()
                        lines[index] = [row] * (str(text).count("\n") + 1)
    except (ValueError, IndexError):
        return {}
    return lines
