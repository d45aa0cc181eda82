"""One view of everything torchpatch knows: rules, API-table rows and platform facts as dated changes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from torchpatch import platform_facts
from torchpatch.engine.linter import ParseFailure, lint_text
from torchpatch.engine.settings import Settings
from torchpatch.findings import SAFE
from torchpatch.rules import all_rules
from torchpatch.rules._table_rule import TableRule
from torchpatch.rules.api_table import ApiChange
from torchpatch.rules.base import Invalid, Rule, example_code, example_filename
from torchpatch.versions import KNOWN_RELEASES, Version

#: Areas, in reading order: key → (title, what it covers).
AREAS: dict[str, tuple[str, str]] = {
    "serialization": ("Serialization and security",
                      "torch.load and weights_only, safe globals, torch.hub trust, object collectives, advisories"),
    "compile": ("Compile and attention",
                "torch.compile, Dynamo, Inductor, FlexAttention, SDPA, varlen attention, TF32"),
    "export": ("Export, ONNX, TorchScript and quantization",
               "torch.export, torch.onnx.export, TorchScript, PT2E and eager quantization"),
    "distributed": ("Distributed",
                    "FSDP, DTensor, DCP, DDP, process groups, symmetric memory, pipelining"),
    "platforms": ("Platforms and wheels",
                  "Python range, CUDA builds and GPU architectures, C++ ABI, extensions, MAGMA, accelerators"),
    "core": ("Core APIs and domain libraries",
             "AMP, autograd, storages, nn, optim, linalg, profiler, data loading, torchvision"),
}

_CATALOG_AREAS = {
    "sec": "serialization", "ser": "serialization",
    "compile": "compile", "attn": "compile",
    "export": "export", "onnx": "export", "quant": "export", "jit": "export",
    "dist": "distributed",
    "plat": "platforms", "cpp": "platforms",
}

#: NVIDIA GPU generation of a compute-capability major.minor, for readable architecture lists.
_GENERATIONS = {(3, 7): "Kepler", (5, 0): "Maxwell", (6, 0): "Pascal", (7, 0): "Volta", (7, 5): "Turing",
                (8, 0): "Ampere", (8, 6): "Ampere", (8, 9): "Ada", (9, 0): "Hopper", (10, 0): "Blackwell",
                (12, 0): "Blackwell"}


def area_of_catalog(catalog_id: str) -> str:
    return _CATALOG_AREAS.get(catalog_id.split(".", 1)[0], "core")


def rule_area(rule: type[Rule]) -> str:
    ids = rule.catalog_ids
    if ids:
        return area_of_catalog(ids[0])
    return "core"


def is_table_rule(rule: type[Rule]) -> bool:
    return issubclass(rule, TableRule)


def table_rows(rule: type[Rule]) -> list[ApiChange]:
    """The API-table rows a table rule serves, oldest change first; [] for other rules."""
    if not is_table_rule(rule):
        return []
    return sorted(rule.rows.values(), key=lambda row: (row.since, row.old))


def generation(cap: tuple[int, int]) -> str:
    name = _GENERATIONS.get(cap)
    text = platform_facts.capability_text(cap)
    return f"{text} ({name})" if name else text


@dataclass(frozen=True)
class Change:
    """One dated change PyTorch made, and how torchpatch handles it."""

    key: str  # stable id: "TP220", "TP101:torch.export.export_for_training", "platform:2.11:python"
    source: str  # "rule", "api-table" or "platform"
    area: str
    title: str  # one line that names the version
    action: str  # what to do
    events: tuple[tuple[Version, str], ...]  # (release, "deprecated" | "removed" | "changed")
    code: str | None = None  # the rule that finds it in code
    name: str | None = None
    old: str | None = None
    new: str | None = None
    replacement_since: Version | None = None
    fix: str | None = None  # "safe", "unsafe" or None (no automatic fix)
    fix_note: str = ""
    note: str = ""
    url: str | None = None
    catalog: tuple[str, ...] = ()
    verified: bool = True  # platform rows: checked against a real wheel
    detected: bool = True  # torchpatch check finds it in code or dependency files
    old_example: str | None = field(default=None, compare=False)
    new_example: str | None = field(default=None, compare=False)

    @property
    def version(self) -> Version:
        return min(version for version, _ in self.events)

    def events_between(self, after: Version, up_to: Version) -> list[tuple[Version, str]]:
        return [(version, what) for version, what in self.events if after < version <= up_to]

    def handling(self) -> str:
        """"safe fix", "unsafe fix", "manual" (found, no fix) or "not detected"."""
        if not self.detected:
            return "not detected"
        if self.fix == SAFE:
            return "safe fix"
        if self.fix == "unsafe":
            return "unsafe fix"
        return "manual"

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key, "source": self.source, "area": self.area, "title": self.title,
            "action": self.action,
            "events": [{"version": str(version), "kind": what} for version, what in self.events],
            "code": self.code, "name": self.name, "old": self.old, "new": self.new,
            "replacement_since": _text(self.replacement_since), "fix": self.fix, "fix_note": self.fix_note,
            "handling": self.handling(), "note": self.note, "url": self.url, "catalog": list(self.catalog),
            "verified": self.verified,
        }


def _text(version: Version | None) -> str | None:
    return str(version) if version is not None else None


def _events(deprecated: Version | None, changed: Version | None, removed: Version | None) -> tuple:
    events = [(deprecated, "deprecated"), (changed, "changed"), (removed, "removed")]
    return tuple((version, what) for version, what in events if version is not None)


@lru_cache(maxsize=None)
def lints_clean(code: str) -> bool:
    """Whether ``torchpatch check --select ALL`` finds nothing in the Python code."""
    try:
        return not lint_text(code, Path("snippet.py"), Settings(select=["ALL"]))
    except ParseFailure:
        return False


def example_pair(rule: type[Rule]) -> tuple[str | None, str | None]:
    """(outdated, fixed) Python code from the rule's examples; the fixed form is one that passes every rule."""
    python = [example for example in rule.INVALID if example_filename(example).endswith(".py")]
    for example in python:
        if isinstance(example, Invalid) and example.fixed and lints_clean(example_code(example.fixed)):
            return example_code(example), example_code(example.fixed)
    return (example_code(python[0]) if python else None), None


def reads_wheel_data(rule: type[Rule]) -> bool:
    """Whether the rule watches names read from the wheels (TP104, TP206, ...): one rule for many APIs."""
    from torchpatch.rules._wheel_rules import LazyNames

    return any(isinstance(klass.__dict__.get(attribute), LazyNames) for klass in rule.__mro__
               for attribute in ("calls", "references_to", "methods", "attributes_assigned"))


def valid_example(rule: type[Rule]) -> str | None:
    """The rule's first VALID example (the form to write) when it is Python that every rule passes.

    None for a rule that reads its names from the wheels: its VALID code is merely code it does not flag
    (TP104's `torch.cat` is no replacement for `torch.align_tensors`), and each API has its own answer.
    """
    if reads_wheel_data(rule):
        return None
    for example in rule.VALID[:1]:
        if example_filename(example).endswith(".py") and lints_clean(example_code(example)):
            return example_code(example)
    return None


def _rule_change(rule: type[Rule]) -> Change:
    old, fixed = example_pair(rule)
    action = rule.fix_safety_note or f"Review by hand: `torchpatch rule {rule.code}` explains what to do."
    return Change(
        key=rule.code, source="rule", area=rule_area(rule), title=rule.summary,
        action=action, events=_events(rule.deprecated_in, rule.changed_in, rule.removed_in),
        code=rule.code, name=rule.name, replacement_since=rule.replacement_since, fix=rule.fix_safety,
        fix_note=rule.fix_safety_note, url=rule.url(), catalog=tuple(rule.catalog_ids),
        old_example=old, new_example=fixed,
    )


def row_title(row: ApiChange) -> str:
    phrase = row.phrase(KNOWN_RELEASES[-1])
    return f"`{row.old}` is {phrase}" + (f"; use `{row.new}`" if row.new else "")


def row_action(row: ApiChange) -> str:
    if row.new:
        action = f"Use `{row.new}`"
        if row.replacement_since:
            action += f" (exists since PyTorch {row.replacement_since})"
        return action + (f"; {row.note}" if row.note else "") + "."
    if row.note:
        return f"No drop-in replacement: {row.note}."
    return "Remove the use: there is no replacement."


def _row_change(rule: type[Rule], row: ApiChange) -> Change:
    fix = None
    if row.new and row.fix != "none":
        fix = "unsafe" if row.fix == "unsafe" else SAFE
    return Change(
        key=f"{rule.code}:{row.old}", source="api-table", area=area_of_catalog(row.catalog), title=row_title(row),
        action=row_action(row), events=_events(row.deprecated_in, None, row.removed_in), code=rule.code,
        name=rule.name, old=row.old, new=row.new, replacement_since=row.replacement_since, fix=fix,
        fix_note=("same behaviour; the fix is unsafe when your minimum torch predates the replacement"
                  if fix == SAFE else ("review needed" if fix else "")),
        note=row.note, url=rule.url(), catalog=(row.catalog,), old_example=row.example, new_example=row.fixed,
    )


def _arch_list(archs) -> str:
    return ", ".join(generation(cap) for cap in archs)


def _platform_changes() -> list[Change]:
    changes: list[Change] = []
    releases = platform_facts.releases()
    index = "https://download.pytorch.org/whl"
    for previous, current in zip(releases, releases[1:]):
        version = current.version
        prefix = f"platform:{version}"

        def add(suffix: str, title: str, action: str, note: str = "", verified: bool = True) -> None:
            changes.append(Change(key=f"{prefix}:{suffix}", source="platform", area="platforms", title=title,
                                  action=action, events=((version, "changed"),), note=note, verified=verified,
                                  detected=False))

        if current.python_min != previous.python_min:
            old_text = previous.python_range_text
            add("python-min", f"PyTorch {version} wheels need Python {current.python_min[0]}.{current.python_min[1]} "
                f"or newer (Python {current.python_range_text}; {previous.version} supported {old_text})",
                f"Move to Python {current.python_min[0]}.{current.python_min[1]}+ before installing torch {version}; "
                f"`torchpatch doctor --python X.Y --target-torch {version}` checks a machine.")
        if current.python_max != previous.python_max:
            add("python-max", f"PyTorch {version} has wheels up to Python {current.python_max[0]}.{current.python_max[1]} "
                f"(Python {current.python_range_text}; {previous.version}: {previous.python_range_text})",
                f"Python {current.python_max[0]}.{current.python_max[1]} can be used from torch {version}.")
        if current.pypi_default != previous.pypi_default:
            build = current.build(current.pypi_default)
            archs = f"; its GPU kernels: {_arch_list(build.archs)}" if build and build.archs else ""
            add("pypi-default", f"`pip install torch=={version}` from PyPI gets the {current.pypi_default} build "
                f"({previous.version}: {previous.pypi_default}){archs}",
                f"Check the driver and GPU before upgrading; for an older GPU or driver install an explicit "
                f"build: `pip install torch=={current.latest_patch} --index-url {index}/<tag>` "
                f"(`torchpatch doctor --gpu sm_XY --target-torch {version}` picks the tag).",
                verified=build.verified if build else True)
        if current.cxx11_abi != previous.cxx11_abi:
            abi = "CXX11 ABI (`_GLIBCXX_USE_CXX11_ABI=1`)" if current.cxx11_abi else "pre-CXX11 ABI"
            add("cxx11-abi", f"PyPI wheels of PyTorch {version} use the {abi}",
                "Rebuild C++ and CUDA extensions against this torch; prebuilt extension wheels for older "
                "torch fail to load with undefined symbols.", note=current.note)
        if current.platform_tag != previous.platform_tag:
            add("platform-tag", f"PyTorch {version} wheels are tagged `{current.platform_tag}` "
                f"({previous.version}: `{previous.platform_tag}`)",
                "Older Linux distributions whose glibc is below the tag's cannot install the wheel.")
        before = {build.tag: build for build in previous.builds}
        after = {build.tag: build for build in current.builds}
        for tag in sorted(set(before) - set(after)):
            add(f"build-{tag}-gone", f"PyTorch {version} ships no {tag} build ({previous.version} did)",
                f"Pick another build for torch {version}, or stay on {previous.version} for {tag}.",
                verified=before[tag].verified)
        for tag in sorted(set(after) - set(before)):
            build = after[tag]
            archs = f" with kernels for {_arch_list(build.archs)}" if build.archs else ""
            add(f"build-{tag}-new", f"PyTorch {version} adds a {tag} build{archs}",
                f"Install it with `--index-url {index}/{tag}`.", verified=build.verified)
        for tag in sorted(set(before) & set(after)):
            old_archs, new_archs = set(before[tag].archs), set(after[tag].archs)
            dropped = sorted(old_archs - new_archs)
            verified = before[tag].verified and after[tag].verified
            if dropped:
                add(f"build-{tag}-archs", f"PyTorch {version} {tag} builds drop {_arch_list(dropped)} "
                    f"(they start at {platform_facts.capability_text(min(new_archs))})",
                    f"On those GPUs use a build that still has their kernels "
                    f"(`torchpatch doctor --gpu {platform_facts.capability_text(dropped[0])} --target-torch {version}`).",
                    note=after[tag].note, verified=verified)
    for advisory in platform_facts.cves():
        fixed = Version.parse(advisory.fixed)
        pinned = advisory.severity == "error"
        alias = f" ({advisory.alias})" if advisory.alias else ""
        changes.append(Change(
            key=f"advisory:{advisory.id}", source="platform", area="serialization",
            title=f"{advisory.id}{alias}: {advisory.summary}; fixed in torch {advisory.fixed}",
            action=f"Require torch>={advisory.fixed}.", events=((fixed, "changed"),),
            # TP304 (vulnerable-torch-pin) reports pins that only allow releases hit by the torch.load advisories.
            code="TP304" if pinned else None, name="vulnerable-torch-pin" if pinned else None,
            note=f"source: {advisory.source}" + (f"; {advisory.note}" if advisory.note else ""),
            verified=advisory.verified, detected=pinned, catalog=()))
    return changes


@lru_cache(maxsize=1)
def all_changes() -> tuple[Change, ...]:
    """Every change torchpatch knows, oldest first: rules, then API-table rows, then platform facts."""
    changes: list[Change] = []
    for rule in all_rules():
        if is_table_rule(rule):
            changes.extend(_row_change(rule, row) for row in table_rows(rule))
        else:
            changes.append(_rule_change(rule))
    changes.extend(_platform_changes())
    return tuple(sorted(changes, key=lambda change: (change.version, change.area, change.key)))


def changes_between(after: Version, up_to: Version, area: str | None = None) -> list[Change]:
    """Changes with an event in the releases after ``after`` up to and including ``up_to``."""
    return [change for change in all_changes()
            if change.events_between(after, up_to) and (area is None or change.area == area)]


def changes_in(release: Version) -> list[tuple[Change, str]]:
    """(change, what happened) for every event in one release."""
    return [(change, what) for change in all_changes() for version, what in change.events if version == release]


def change_for_finding(code: str, message: str) -> Change | None:
    """The change a ``torchpatch check`` finding reports: its rule, or for table rules its row."""
    candidates = [change for change in all_changes() if change.code == code and change.source != "platform"]
    if len(candidates) == 1:
        return candidates[0]
    named = re.match(r"`([^`]+)`", message)
    if named:
        return next((change for change in candidates if change.old == named.group(1)), None)
    return None


# -- search --------------------------------------------------------------------------------------
_STOPWORDS = frozenset("a an and are by can do does for from how i in is it my of on or replaced replaces "
                       "replacement the to use used what when where which why with instead new old now".split())
_SUFFIXES = ("ations", "ation", "ated", "ates", "ating", "ing", "ed", "es", "s")
#: A rule watching more names than this (the wheel-data rules watch thousands) is not indexed by them:
#: they would drown its prose; an exact name in the query still finds it.
_MAX_INDEXED_NAMES = 40
#: Platform facts answer machine questions; for a question that names an API, rules and rows come first.
_PLATFORM_WEIGHT = 0.5
KINDS = ("rule", "api-change", "platform")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(query: str) -> list[str]:
    return [term for term in re.findall(r"[A-Za-z0-9_.]+", query.lower().strip(" ?."))
            if term.strip(".") and term not in _STOPWORDS]


def search_tokens(text: str) -> list[str]:
    """Words for ranking: a dotted or snake_case name counts whole and by its parts (stemmed, no stopwords)."""
    tokens: list[str] = []
    for term in _terms(text):
        term = term.strip("._")
        if not term:
            continue
        parts = [part for part in re.split(r"[._]+", term) if part and part not in _STOPWORDS]
        if len(parts) > 1:
            tokens.append(term)
        for part in parts:
            tokens.append(_stem(part))
            versioned = re.fullmatch(r"([a-z]{3,})\d+", part)  # "fsdp2" is also about "fsdp"
            if versioned:
                tokens.append(versioned.group(1))
    return tokens


class Bm25:
    """Okapi BM25 over pre-tokenised documents (k1 = 1.2; b = 0.5, below the usual 0.75: a rule with long prose is not a worse answer)."""

    def __init__(self, documents: list[list[str]], k1: float = 1.2, b: float = 0.5) -> None:
        import math
        from collections import Counter

        self.k1, self.b = k1, b
        self.frequencies = [Counter(tokens) for tokens in documents]
        self.lengths = [len(tokens) for tokens in documents]
        self.average_length = (sum(self.lengths) / len(documents)) if documents else 0.0
        containing = Counter(token for counts in self.frequencies for token in counts)
        total = len(documents)
        # The BM25+ style idf floor keeps a word found in most documents from scoring below zero.
        self.idf = {token: math.log(1 + (total - count + 0.5) / (count + 0.5)) for token, count in containing.items()}

    def scores(self, query: list[str]) -> list[float]:
        results = []
        for counts, length in zip(self.frequencies, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.average_length) if self.average_length else self.k1
            results.append(sum(self.idf[token] * counts[token] * (self.k1 + 1) / (counts[token] + norm)
                               for token in set(query) if token in counts))
        return results


@dataclass(frozen=True)
class SearchEntry:
    """One searchable thing: a rule, an API-table row or a platform fact, and its answer JSON."""

    kind: str
    key: str
    area: str
    tokens: tuple[str, ...]
    names: frozenset[str]  # exact API names it is about (lowercase)
    answer: dict[str, Any] = field(compare=False, hash=False)


def _weighted(*fields: tuple[str, int]) -> tuple[str, ...]:
    """Tokens of each field, repeated by its weight (titles count more than prose)."""
    tokens: list[str] = []
    for text, weight in fields:
        tokens.extend(search_tokens(text) * weight)
    return tuple(tokens)


def rule_summary_json(rule: type[Rule]) -> dict[str, Any]:
    """What a search hit or a list needs of a rule: no watched-name lists, no rows."""
    table = is_table_rule(rule)
    entry: dict[str, Any] = {
        "kind": "rule", "code": rule.code, "name": rule.name, "summary": rule.summary,
        "area": None if table else rule_area(rule), "versions": "PyTorch: " + versions_text(rule),
        "fix": rule.fix_safety, "opt_in": rule.opt_in, "url": rule.url(),
    }
    torch_message = getattr(rule, "torch_message", None)
    if torch_message:
        entry["torch_message"] = torch_message
    return entry


def change_summary_json(change: Change) -> dict[str, Any]:
    """A change without its examples and URLs: the fields an agent acts on."""
    entry: dict[str, Any] = {
        "kind": "api-change" if change.source == "api-table" else change.source, "key": change.key,
        "area": change.area, "title": change.title, "action": change.action,
        "events": [{"version": str(version), "kind": what} for version, what in change.events],
        "handling": change.handling(),
    }
    for name in ("code", "old", "new"):
        if getattr(change, name):
            entry[name] = getattr(change, name)
    if not change.verified:
        entry["verified"] = False
    if change.note:
        entry["note"] = change.note
    return entry


@lru_cache(maxsize=1)
def search_entries() -> tuple[SearchEntry, ...]:
    """Rules (titles, prose, watched names, torch's warning text), API rows and platform facts, to rank."""
    entries: list[SearchEntry] = []
    for rule in all_rules():
        if is_table_rule(rule):
            continue
        watched = rule.calls | rule.references_to | rule.methods | rule.attributes_assigned
        indexed = " ".join(sorted(watched | rule.dependencies)) if len(watched) <= _MAX_INDEXED_NAMES else ""
        outdated = " ".join(example_code(example) for example in rule.INVALID[:3])
        tokens = _weighted((f"{rule.code} {rule.name} {rule.summary}", 3), (indexed, 2),
                           (getattr(rule, "torch_message", None) or "", 2), (" ".join(rule.catalog_ids), 1),
                           (rule.prose(), 1), (outdated, 1))
        entries.append(SearchEntry("rule", rule.code, rule_area(rule), tokens,
                                   frozenset(name.lower() for name in watched), rule_summary_json(rule)))
    for change in all_changes():
        if change.source == "rule":
            continue
        if change.source == "api-table":
            tokens = _weighted((f"{change.old} {change.new or ''}", 3), (change.title, 2),
                               (f"{change.note} {' '.join(change.catalog)}", 1))
            names = frozenset(name.lower() for name in (change.old, change.new) if name)
        else:
            tokens = _weighted((change.title, 2), (f"{change.action} {change.note}", 1))
            names = frozenset()
        entries.append(SearchEntry("api-change" if change.source == "api-table" else "platform", change.key,
                                   change.area, tokens, names, change_summary_json(change)))
    return tuple(entries)


@lru_cache(maxsize=1)
def _index() -> Bm25:
    return Bm25([list(entry.tokens) for entry in search_entries()])


def ranked(query: str, kind: str | None = None, area: str | None = None) -> list[tuple[float, SearchEntry]]:
    """Every entry that matches the query, best first (BM25; an exact API name counts most).

    For a question that names an API (a dotted or snake_case word, or a name some rule watches) platform
    facts rank at half weight, so the rule that finds the API in code comes first.
    """
    tokens = search_tokens(query)
    if not tokens:
        return []
    exact = {term.strip("._") for term in _terms(query)}
    entries = search_entries()
    names_asked = any(term in entry.names for entry in entries for term in exact)
    asks_api = names_asked or any("." in term or "_" in term for term in exact)
    results = []
    for entry, score in zip(entries, _index().scores(tokens)):
        if (kind is not None and entry.kind != kind) or (area is not None and entry.area != area):
            continue
        # A query naming exactly what an entry is about: as strong as every other word together.
        matched = exact & entry.names
        if matched:
            score += 4.0 * len(matched) + score
        if entry.kind == "platform" and asks_api:
            score *= _PLATFORM_WEIGHT
        if score > 0:
            results.append((score, entry))
    order = {name: index for index, name in enumerate(KINDS)}
    results.sort(key=lambda item: (-round(item[0], 6), order[item[1].kind], item[1].key))
    return results


def search(query: str, limit: int = 20, kind: str | None = None, area: str | None = None) -> list[dict[str, Any]]:
    """Rules, API-table rows and platform facts that match the query, best first (their summary JSON)."""
    return [{**entry.answer, "score": round(score, 2)} for score, entry in ranked(query, kind, area)[:limit]]


# -- the one export -------------------------------------------------------------------------------
def row_json(row: ApiChange) -> dict[str, Any]:
    return {
        "old": row.old, "new": row.new, "kind": row.kind, "deprecated_in": _text(row.deprecated_in),
        "removed_in": _text(row.removed_in), "replacement_since": _text(row.replacement_since),
        "fix": row.fix, "note": row.note, "catalog": row.catalog, "new_module": row.new_module,
        "area": area_of_catalog(row.catalog), "example": row.example, "fixed": row.fixed,
    }


def versions_text(rule: type[Rule]) -> str:
    """"deprecated in 2.6, replacement available since 2.6"; for table rules, the span of their rows."""
    rows = table_rows(rule)
    if rows:
        kinds = []
        deprecated = sorted({row.deprecated_in for row in rows if row.deprecated_in is not None})
        removed = sorted({row.removed_in for row in rows if row.removed_in is not None})
        if deprecated:
            kinds.append(f"deprecated in {_span(deprecated)}")
        if removed:
            kinds.append(f"removed in {_span(removed)}")
        return f"per API ({len(rows)} rows: " + ", ".join(kinds) + "; each row gives its own versions)"
    parts = []
    if rule.deprecated_in:
        parts.append(f"deprecated in {rule.deprecated_in}")
    if rule.changed_in:
        parts.append(f"changed in {rule.changed_in}")
    if rule.removed_in:
        parts.append(f"removed in {rule.removed_in}")
    if rule.replacement_since:
        parts.append(f"replacement available since {rule.replacement_since}")
    return ", ".join(parts)


def _span(versions: list[Version]) -> str:
    return str(versions[0]) if len(versions) == 1 else f"{versions[0]}–{versions[-1]}"


def rule_metadata(rule: type[Rule], with_rows: bool = True) -> dict[str, Any]:
    """Everything a rule declares, as JSON; a table rule carries its rows (each with its own versions)."""
    table = is_table_rule(rule)
    entry: dict[str, Any] = {
        "code": rule.code, "name": rule.name, "summary": rule.summary,
        "area": None if table else rule_area(rule),  # a table rule's rows each have an area
        "versions": "PyTorch: " + versions_text(rule),
        # A table rule has no versions of its own: each row has them.
        "deprecated_in": None if table else _text(rule.deprecated_in),
        "changed_in": None if table else _text(rule.changed_in),
        "removed_in": None if table else _text(rule.removed_in),
        "replacement_since": None if table else _text(rule.replacement_since),
        "fix": rule.fix_safety, "fix_safety_note": rule.fix_safety_note, "url": rule.url(),
        "references": list(rule.references), "torchfix_codes": list(rule.torchfix_codes),
        "catalog_ids": list(rule.catalog_ids), "opt_in": rule.opt_in,
        "watches": {"calls": sorted(rule.calls), "references": sorted(rule.references_to),
                    "methods": sorted(rule.methods), "attributes_assigned": sorted(rule.attributes_assigned),
                    "dependencies": sorted(rule.dependencies)},
    }
    if table and with_rows:
        entry["rows"] = [row_json(row) for row in table_rows(rule)]
    return entry
