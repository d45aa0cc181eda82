"""The API-evolution database read from the real wheels (rules/data/api_db.json.gz), loaded on first use.

Built by ``scripts/build_api_db.py`` from the Python sources of every minor release 2.4 … 2.15 (the
newest patch of each). It keeps only what changes across those releases:

- ``removed``: qualified name → [first release without it, a public replacement or None, a later release
  that serves it again or None, the first release that had it]; a name is
  "without" only when its module is *closed* in that release (no module ``__getattr__``, no
  ``sys.modules`` replacement, no ``globals()`` writes), so a moved or lazily served name never is;
- ``removed_modules``: module → [first release with neither a file nor a ``sys.modules`` alias, first
  release that had it, the public module of the same name when a private one went public];
- ``deprecated``: qualified name (class members included) → [first release that warns, torch's message
  in the newest release that still warns, kind]; dropped when the newest release no longer warns;
- ``keywords``: callable → keyword → {"removed": [release, renamed_to], "keyword_only": [release,
  position], "defaults": [[release, old, new], …], "deprecated": [release, message]}.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from torchpatch._gunzip import gunzip
from torchpatch._record import FrozenRecord
from torchpatch.versions import Version

DB_PATH = Path(__file__).with_name("data") / "api_db.json.gz"


class Removal(FrozenRecord):
    """An API removed from torch, with the release and the replacement."""

    qualname: str
    removed_in: Version
    replacement: str | None
    back_in: Version | None = None  # a later release that serves the name again
    is_module: bool = False
    first_in: Version | None = None  # the first release (2.4 …) that has the name


class Deprecation(FrozenRecord):
    """An API torch deprecates, with the release and the replacement."""

    qualname: str
    deprecated_in: Version
    message: str
    kind: str  # "function", "class" (warns when instantiated), "member", "module", "name"


def _optional(text: str | None) -> Version | None:
    return Version.parse(text) if text else None


@lru_cache(maxsize=1)
def _raw() -> dict:
    return json.loads(gunzip(DB_PATH.read_bytes()))


def releases() -> tuple[Version, ...]:
    return tuple(Version.parse(text) for text in _raw()["releases"])


@lru_cache(maxsize=1)
def removed_names() -> dict[str, Removal]:
    found = {name: Removal(name, Version.parse(release), replacement, _optional(back), False, _optional(first))
             for name, (release, replacement, back, first) in _raw()["removed"].items()}
    for module, (release, first, replacement) in _raw()["removed_modules"].items():
        found.setdefault(module, Removal(module, Version.parse(release), replacement, None, True, Version.parse(first)))
    return found


@lru_cache(maxsize=1)
def deprecations() -> dict[str, Deprecation]:
    return {name: Deprecation(name, Version.parse(release), message, kind)
            for name, (release, message, kind) in _raw()["deprecated"].items()}


@lru_cache(maxsize=1)
def keyword_changes() -> dict[str, dict[str, dict]]:
    return _raw()["keywords"]


def public_modules(release: Version) -> list[str]:
    return _raw()["public_modules"].get(str(release), [])


STAR_PATH = DB_PATH.with_name("star_exports.json.gz")


@lru_cache(maxsize=1)
def _star_raw() -> dict:
    """rules/data/star_exports.json.gz (scripts/build_api_db.py): module → {release bit mask: "name name …"}."""
    return json.loads(gunzip(STAR_PATH.read_bytes()))


@lru_cache(maxsize=256)
def star_exports(module: str, min_torch: Version, target: Version) -> frozenset[str] | None:
    """The names ``from module import *`` binds on some release from ``min_torch`` to ``target`` (``__all__``, or
    the module's public names), or None for a module no release 2.4 … 2.15 has. Releases past the newest
    known one are read as the newest."""
    raw = _star_raw()
    groups = raw["modules"].get(module)
    if groups is None:
        return None
    known = [Version.parse(text) for text in raw["releases"]]
    low, high = min(min_torch, known[-1]), min(target, known[-1])
    wanted = 0
    for bit, release in enumerate(known):
        if low <= release <= high:
            wanted |= 1 << bit
    if not wanted:
        wanted = 1  # the whole range is older than 2.4: 2.4 is the closest known release
    return frozenset(name for mask, names in groups.items() if int(mask) & wanted for name in names.split())
