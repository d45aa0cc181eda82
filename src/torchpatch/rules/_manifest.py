"""What the engine needs to know of every rule before any rule module is imported, kept precompiled.

A check selects rules by code, name and TorchFix code, indexes them by the names they watch and keys the
result cache by the enabled codes. All of that is metadata, so it is read from a manifest (one JSON file per
build of torchpatch, like a ``.pyc``) instead of importing the rule modules; a rule module is imported only
when a file holds a name it watches (``LazyRule``). The manifest is rebuilt, by importing every rule once,
whenever a file of the package changes (``package_fingerprint``): a rule added or edited is seen at once.
"""

from __future__ import annotations

try:  # hashlib's own blake2b, without importing hashlib (which initialises OpenSSL: see torchpatch/_hashing.py)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b
import importlib
import json
import os
from functools import lru_cache
from pathlib import Path

import torchpatch
from torchpatch.rules.base import CallNeed
from torchpatch.versions import Version

#: Where the manifests live unless ``TORCHPATCH_MANIFEST_DIR`` says otherwise (beside pip's and ruff's caches).
MANIFEST_ENV = "TORCHPATCH_MANIFEST_DIR"
_FORMAT = 8
_KEPT_MANIFESTS = 4
_PACKAGE = Path(__file__).resolve().parents[1]
_FINGERPRINTED_SUFFIXES = (".py", ".toml", ".json", ".gz")
#: Metadata fields copied from each rule class; the sets are what ``RuleIndex`` indexes.
_NAME_SETS = ("calls", "references_to", "methods", "methods_with_mention", "words_needed", "decorators_only",
              "class_decorators_only", "attributes_assigned", "dependencies", "methods_defined")
#: Name -> CallNeed fields (``Rule.call_needs``, ``Rule.method_needs``).
_NEED_MAPS = ("call_needs", "method_needs")


@lru_cache(maxsize=1)
def package_fingerprint() -> str:
    """torchpatch's version and the size and mtime of each of its own source and data files: an edited rule
    in an editable install gives a new fingerprint (so a new manifest and new result-cache keys)."""
    digest = blake2b(torchpatch.__version__.encode(), digest_size=16)
    entries = []
    root = str(_PACKAGE)
    skip = len(root) + 1
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append(entry.path)
                elif entry.name.endswith(_FINGERPRINTED_SUFFIXES):
                    stat = entry.stat()
                    relative = entry.path[skip:].replace(os.sep, "/")
                    entries.append(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}\n")
    for line in sorted(entries):
        digest.update(line.encode())
    return digest.hexdigest()


class RuleFacts:
    """One rule's metadata, as ``Rule`` spells it (``code``, ``name``, ``opt_in``, ``torchfix_codes``, the
    watched-name sets, ``since()``), so selection code takes a fact or a rule class alike."""

    __slots__ = ("code", "name", "module", "class_name", "opt_in", "torchfix_codes", "_since", "_kind",
                 *_NEED_MAPS, *_NAME_SETS)

    def __init__(self, entry: dict) -> None:
        self.code = entry["code"]
        self.name = entry["name"]
        self.module = entry["module"]
        self.class_name = entry["class_name"]
        self.opt_in = entry["opt_in"]
        self.torchfix_codes = tuple(entry["torchfix_codes"])
        self._since = Version.parse(entry["since"])
        self._kind = entry["kind"]
        for field in _NAME_SETS:
            setattr(self, field, frozenset(entry[field]))
        for field in _NEED_MAPS:
            setattr(self, field, {name: CallNeed(frozenset(words), tuple(map(tuple, passed)), tuple(map(tuple, missing)),
                                                 frozenset(counts))
                                  for name, (words, passed, missing, counts) in entry[field].items()})

    def since(self) -> Version:
        return self._since

    def kind(self) -> str:
        return self._kind

    def url(self) -> str:
        from torchpatch.rules.base import DOCS_URL

        return DOCS_URL.format(name=self.name)

    def rule_class(self) -> type:
        return getattr(importlib.import_module(self.module), self.class_name)


class LazyRule:
    """A rule instance whose module is imported on first use of anything but its metadata (a hook such as
    ``check_call``, ``fix_safety``, ``url()``): what ``RuleIndex`` holds, so that a file that mentions no
    watched name imports no rule."""

    __slots__ = ("code", "name", "opt_in", "torchfix_codes", *_NEED_MAPS, *_NAME_SETS, "_facts", "_rule")

    def __init__(self, facts: RuleFacts) -> None:
        self._facts = facts
        self._rule = None
        for field in ("code", "name", "opt_in", "torchfix_codes", *_NEED_MAPS, *_NAME_SETS):
            setattr(self, field, getattr(facts, field))

    def since(self) -> Version:
        return self._facts.since()

    def __getattr__(self, attribute: str):
        rule = self._rule
        if rule is None:
            rule = self._rule = self._facts.rule_class()()
        return getattr(rule, attribute)

    def __repr__(self) -> str:
        return f"LazyRule({self.code})"


def _entry(rule: type) -> dict:
    return {"code": rule.code, "name": rule.name, "module": rule.__module__, "class_name": rule.__qualname__,
            "opt_in": bool(rule.opt_in), "torchfix_codes": list(rule.torchfix_codes), "since": str(rule.since()),
            "kind": rule.kind(),
            **{field: sorted(getattr(rule, field)) for field in _NAME_SETS},
            **{field: {name: [sorted(need.words), [list(p) for p in need.passed], [list(m) for m in need.missing],
                              sorted(need.counts)]
                       for name, need in sorted(getattr(rule, field).items())} for field in _NEED_MAPS}}


def _manifest_dir() -> Path:
    configured = os.environ.get(MANIFEST_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchpatch"


def _read(path: Path) -> tuple[RuleFacts, ...] | None:
    try:
        data = json.loads(path.read_bytes())
        if data.get("format") == _FORMAT:
            return tuple(RuleFacts(entry) for entry in data["rules"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # absent, or not a manifest of this format
        pass
    return None


def _write(path: Path, entries: list[dict]) -> None:
    """Atomically; a cache folder that cannot be written only costs the next run the rule imports."""
    _write_json(path, {"format": _FORMAT, "rules": entries}, "rules")


def _write_json(path: Path, payload: dict, prefix: str) -> None:
    """Atomically, keeping the few newest files of this kind (an edited editable install makes a new one at each
    edit; other installs keep theirs)."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{prefix}-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, separators=(",", ":"))
        os.replace(temporary, path)
        older = sorted(path.parent.glob(f"{prefix}-*.json"), key=lambda other: other.stat().st_mtime, reverse=True)
        for stale in older[_KEPT_MANIFESTS:]:
            stale.unlink()
    except (OSError, TypeError, ValueError):
        return


def cached_data(name: str, build):
    """A JSON value that ``build`` computes from the package's own data files (the API table's TOML), kept beside
    the manifests under the same fingerprint: parsed once per build of torchpatch, not at every start-up (issue 27:
    tomllib's parse of api_changes.toml was a fifth of a one-file check). Data only, never code."""
    path = _manifest_dir() / f"{name}-{package_fingerprint()}.json"
    try:
        data = json.loads(path.read_bytes())
        if data.get("format") == _FORMAT:
            return data["value"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # absent, or not of this format
        pass
    value = build()
    _write_json(path, {"format": _FORMAT, "value": value}, name)
    return value


@lru_cache(maxsize=1)
def rule_facts() -> tuple[RuleFacts, ...]:
    """Every rule's facts, sorted by code (the order of ``all_rules()``): from this build's manifest, or,
    when there is none yet (or it cannot be read), from the rule classes themselves, then written."""
    global _building
    path = _manifest_dir() / f"rules-{package_fingerprint()}.json"
    facts = _read(path)
    if facts is None:
        from torchpatch.rules import all_rules

        _building = True
        try:
            entries = [_entry(rule) for rule in all_rules()]
        finally:
            _building = False
        _write(path, entries)
        facts = tuple(RuleFacts(entry) for entry in entries)
    return facts


_building = False


def building() -> bool:
    """Whether the manifest is being built now (from the rule classes): code that runs while rules are imported
    then reads the classes themselves, not the manifest."""
    return _building
