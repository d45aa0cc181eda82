"""Which rules run, for which releases: the resolved form of CLI options and configuration."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from torchpatch._record import Record
from torchpatch.engine.codes import UNUSED_NOQA
from torchpatch.rules._manifest import LazyRule, RuleFacts, rule_facts
from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from torchpatch.engine.checker import RuleIndex

#: TorchFix codes → ours, so ``--select TOR102`` and ``# noqa: TOR102`` keep working.
TORCHFIX_REDIRECTS: dict[str, tuple[str, ...]] = {}


def torchfix_redirects() -> dict[str, tuple[str, ...]]:
    if not TORCHFIX_REDIRECTS:
        for rule in rule_facts():
            for code in rule.torchfix_codes:
                TORCHFIX_REDIRECTS.setdefault(code, ())
                TORCHFIX_REDIRECTS[code] += (rule.code,)
    return TORCHFIX_REDIRECTS


#: The rule indexes of the process, by (enabled codes, target): they depend on nothing else, so the settings of
#: every folder of a tree share one (a tree with 20 project roots built 20 before).
_RULE_INDEXES: dict[tuple[frozenset[str], Version], "RuleIndex"] = {}


class SelectionError(ValueError):
    pass


#: Codes the engine itself reports that a selection can name (not rules of the database); opt-in, like ruff's RUF100.
SELECTABLE_ENGINE_CODES = {UNUSED_NOQA.code: UNUSED_NOQA.name}


def expand_selector(selector: str, rules: tuple[RuleFacts, ...]) -> set[str]:
    """Codes matched by a selector: ALL, a code, a prefix (TP3, TP30), a rule name or a TorchFix code."""
    key = selector.strip()
    upper = key.upper()
    if upper == "ALL":
        return {rule.code for rule in rules} | set(SELECTABLE_ENGINE_CODES)
    redirects = torchfix_redirects()
    if upper.startswith("TOR"):
        matched = {code for tor, codes in redirects.items() if tor.startswith(upper) for code in codes}
        if matched:
            return matched
    matched = {rule.code for rule in rules if rule.code.startswith(upper) or rule.name == key.lower()}
    matched |= {code for code, name in SELECTABLE_ENGINE_CODES.items() if code.startswith(upper) or name == key.lower()}
    if not matched:
        raise SelectionError(f"unknown rule selector {selector!r}")
    return matched


#: Settings fields that cannot change a file's findings beyond what ``codes_for`` already says (selection),
#: or that only decide which files are checked or where a value came from.
_NOT_IN_RESULT_KEY = frozenset({"target", "min_torch", "select", "extend_select", "ignore", "per_file_ignores",
                                "exclude", "extend_exclude", "project_root", "min_torch_source",
                                "command_line_extend_select", "command_line_ignore", "config_path", "key_sources"})


class Settings(Record):
    """What applies to one file: the releases, the selected codes, the excludes and ignores."""

    _fields = ("target", "min_torch", "min_torch_source", "select", "extend_select", "ignore", "per_file_ignores",
               "exclude", "extend_exclude", "project_root", "command_line_extend_select", "command_line_ignore",
               "config_path", "key_sources")

    def __init__(self, target: Version = NEWEST_KNOWN, min_torch: Version = OLDEST_KNOWN,
                 min_torch_source: str = "default", select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 per_file_ignores: dict[str, list[str]] | None = None, exclude: list[str] | None = None,
                 extend_exclude: list[str] | None = None, project_root: Path | None = None,
                 command_line_extend_select: list[str] | None = None, command_line_ignore: list[str] | None = None,
                 config_path: Path | None = None, key_sources: dict[str, str] | None = None) -> None:
        self.target = target
        self.min_torch = min_torch
        self.min_torch_source = min_torch_source
        self.select = select
        self.extend_select = [] if extend_select is None else extend_select
        self.ignore = [] if ignore is None else ignore
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.exclude = exclude
        self.extend_exclude = [] if extend_exclude is None else extend_exclude
        self.project_root = project_root
        #: The command line's layer, applied after the configuration's (ruff's order): its --extend-select
        #: re-enables what the file ignores. Empty when --select was given (the selection then starts anew).
        self.command_line_extend_select = [] if command_line_extend_select is None else command_line_extend_select
        self.command_line_ignore = [] if command_line_ignore is None else command_line_ignore
        self.config_path = config_path  # the configuration file these settings come from, if any
        self.key_sources = {} if key_sources is None else key_sources  # configuration key → the file that set it

    def enabled_codes(self) -> frozenset[str]:
        cached = self.__dict__.get("_enabled_codes")
        if cached is not None and cached[0] == self._selection_key():
            return cached[1]
        codes = frozenset(self._compute_enabled_codes())
        self.__dict__["_enabled_codes"] = (self._selection_key(), codes)
        return codes

    def _selection_key(self) -> tuple:
        return (tuple(self.select or ()), self.select is None, tuple(self.extend_select), tuple(self.ignore),
                tuple(self.command_line_extend_select), tuple(self.command_line_ignore))

    def _compute_enabled_codes(self) -> set[str]:
        rules = rule_facts()
        if self.select is None:
            codes = {rule.code for rule in rules if not rule.opt_in}
        else:
            codes = set()
            for selector in self.select:
                codes |= expand_selector(selector, rules)
        for selector in self.extend_select:
            codes |= expand_selector(selector, rules)
        for selector in self.ignore:
            codes -= expand_selector(selector, rules)
        for selector in self.command_line_extend_select:
            codes |= expand_selector(selector, rules)
        for selector in self.command_line_ignore:
            codes -= expand_selector(selector, rules)
        return codes

    def codes_for(self, path: Path) -> frozenset[str]:
        """The enabled codes for one file: the selection less its per-file ignores (gitignore-style globs)."""
        codes = self.enabled_codes()
        if not self.per_file_ignores:
            return codes  # the same frozenset for every file: its hash is computed once (rules_for's key)
        relative = _relative(path, self.project_root)
        for pattern, selectors in self.per_file_ignores.items():
            if _glob_matches(pattern, relative, path.name):
                for selector in selectors:
                    codes = codes - expand_selector(selector, rule_facts())
        return frozenset(codes)

    def result_key(self, path: Path) -> str:
        """Everything in these settings that can change one file's findings, as text (for the cache): the
        file's enabled codes stand for the selection fields, and any field added later is included as is."""
        codes = self.codes_for(path)
        others = [f"{name}={getattr(self, name)!r}" for name in sorted(self._fields)
                  if name not in _NOT_IN_RESULT_KEY]
        known = self.__dict__.get("_result_key")  # every file of a folder without per-file ignores: one key
        if known is not None and known[0] is codes and known[1] == (self.target, self.min_torch, others):
            return known[2]
        key = "|".join([str(self.target), str(self.min_torch), ",".join(sorted(codes)), *others])
        self.__dict__["_result_key"] = (codes, (self.target, self.min_torch, others), key)
        return key

    def __getstate__(self) -> dict:
        # Worker processes rebuild the rule indexes; only the plain fields travel.
        return {key: value for key, value in self.__dict__.items() if not key.startswith("_")}

    def rules_for(self, path: Path) -> "RuleIndex":
        """The enabled rules for one file, indexed; built once per distinct set of codes."""
        codes = self.codes_for(path)
        key = (codes, self.target)
        index = _RULE_INDEXES.get(key)
        if index is None:
            from torchpatch.engine.checker import RuleIndex

            # Each rule's module is imported when a file first holds a name it watches (rules/_manifest.py).
            index = _RULE_INDEXES[key] = RuleIndex([LazyRule(facts) for facts in rule_facts()
                                                    if facts.code in codes and facts.since() <= self.target])
        return index

    def validate(self) -> None:
        rules = rule_facts()
        for selector in [*(self.select or []), *self.extend_select, *self.ignore, *self.command_line_extend_select,
                         *self.command_line_ignore,
                         *(s for selectors in self.per_file_ignores.values() for s in selectors)]:
            expand_selector(selector, rules)
        if self.min_torch > self.target:
            raise SelectionError(f"min-torch {self.min_torch} is newer than target-torch {self.target}")



@lru_cache(maxsize=256)
def _compiled_glob(pattern: str):
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", [pattern])


def _glob_matches(pattern: str, relative: str, name: str) -> bool:
    """ruff's per-file-ignores: a glob with ``**`` semantics against the project-relative path, or the name."""
    spec = _compiled_glob(pattern)
    return spec.match_file(relative) or spec.match_file(name)


def _relative(path: Path, root: Path | None) -> str:
    try:
        return path.resolve().relative_to((root or Path.cwd()).resolve()).as_posix()
    except ValueError:
        return path.as_posix()
