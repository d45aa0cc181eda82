"""PyTorch release numbers: parsing, comparison and the releases torchpatch knows."""

from __future__ import annotations

import re
from functools import total_ordering

_RELEASE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


@total_ordering
class Version:
    """A PyTorch release as (major, minor); patch releases never change the API."""

    __slots__ = ("major", "minor")

    def __init__(self, major: int, minor: int) -> None:
        self.major = major
        self.minor = minor

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _RELEASE.match(str(text))
        if not match:
            raise ValueError(f"not a PyTorch version: {text!r} (expected X.Y, e.g. 2.6)")
        return cls(int(match.group(1)), int(match.group(2)))

    def _key(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Version.parse(other)
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: "Version | str") -> bool:
        if isinstance(other, str):
            other = Version.parse(other)
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __repr__(self) -> str:
        return f"Version({self.major}, {self.minor})"


def v(text: str) -> Version:
    """Short constructor for rule metadata: ``v("2.6")``."""
    return Version.parse(text)


#: Minor releases whose wheels the rule database was checked against.
KNOWN_RELEASES: tuple[Version, ...] = tuple(Version(2, minor) for minor in range(4, 16))
OLDEST_KNOWN: Version = KNOWN_RELEASES[0]
NEWEST_KNOWN: Version = KNOWN_RELEASES[-1]
