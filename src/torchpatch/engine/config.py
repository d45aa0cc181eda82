"""Configuration: ``[tool.torchpatch]`` in pyproject.toml or a torchpatch.toml, and the project's torch pins."""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Iterator

from torchpatch._record import FrozenRecord
from torchpatch.dependency_names import tomllib
from torchpatch.engine.settings import SelectionError, Settings
from torchpatch.versions import KNOWN_RELEASES, OLDEST_KNOWN, Version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet


class Setting(FrozenRecord):
    """One configuration key, as `[tool.torchpatch]` and torchpatch.toml take it (the settings reference is
    generated from these)."""

    name: str
    kind: type  # list, str or dict: the TOML value's type
    default: str  # as the reference states it
    description: str
    example: str  # a TOML value


SETTINGS = (
    Setting("select", list, '["default"]', "Rule codes or prefixes to report (`ALL` for every rule, the opt-in "
            "ones included); replaces the default selection.", '["TP1", "TP301"]'),
    Setting("extend-select", list, "[]", "Codes or prefixes reported on top of the selection (opt-in rules).",
            '["TP9"]'),
    Setting("ignore", list, "[]", "Codes or prefixes never reported.", '["TP302"]'),
    Setting("exclude", list, "the default excludes (.git, .venv, build, ...)",
            "Files and folders not checked (gitignore patterns); replaces the default excludes.", '["vendor/"]'),
    Setting("extend-exclude", list, "[]", "Files and folders not checked, on top of the default excludes.",
            '["third_party/", "*_pb2.py"]'),
    Setting("per-file-ignores", dict, "{}", "Codes ignored in the files that match each pattern.",
            '{"tests/*" = ["TP301"]}'),
    Setting("target-torch", str, "the newest release torchpatch knows",
            "The release the code moves to (raised to min-torch when the project's pins are newer).", '"2.11"'),
    Setting("min-torch", str, "read from the project's torch pins, else 2.4",
            "The oldest release the code must still run on (decides which fixes are safe). Without it, the "
            "torch pins of the project's dependency files (pyproject.toml, setup.cfg, setup.py, "
            "requirements*.txt, environment.yml) decide, found from this file's folder upwards to the "
            "project's root.", '"2.6"'),
    Setting("extend", str, "none", "Another configuration file (a pyproject.toml or torchpatch.toml, relative to "
            "this one) whose settings this file starts from; its own keys override them.", '"../pyproject.toml"'),
)
KNOWN_KEYS = {setting.name: setting.kind for setting in SETTINGS}


class ConfigError(ValueError):
    """A configuration problem; the message names the file and the key."""


#: The configuration files of one folder, in the order they are looked for (ruff: .ruff.toml, ruff.toml,
#: pyproject.toml); the first two hold the keys at the top level, pyproject.toml in [tool.torchpatch].
CONFIG_FILE_NAMES = (".torchpatch.toml", "torchpatch.toml", "pyproject.toml")


def find_config(start: Path) -> Path | None:
    """The nearest .torchpatch.toml, torchpatch.toml, or pyproject.toml with a [tool.torchpatch] table, from
    start upwards.

    A pyproject.toml that is not valid TOML is an error (as in ruff), not a file to skip silently."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        found = config_in(folder)
        if found is not None:
            return found
    return None


def config_in(folder: Path, files: frozenset[str] | None = None) -> Path | None:
    """The configuration file of one folder, if it has one. ``files``: those of CONFIG_FILE_NAMES that the
    folder's listing shows to be files (a stat each otherwise)."""
    for name in CONFIG_FILE_NAMES[:2]:
        candidate = folder / name
        if (name in files) if files is not None else candidate.is_file():
            return candidate
    candidate = folder / "pyproject.toml"
    if ("pyproject.toml" in files) if files is not None else candidate.is_file():
        if "torchpatch" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None


def load_config(path: Path) -> dict:
    """The keys of one configuration file, those of the files it ``extend``s included (its own win)."""
    return load_config_with_sources(path)[0]


def load_config_with_sources(path: Path, extending: tuple[Path, ...] = ()) -> tuple[dict, dict[str, Path]]:
    """The keys of a configuration file after ``extend``, and the file each key came from."""
    table = _own_table(path)
    sources = {key: path for key in table}
    base_name = table.pop("extend", None)
    sources.pop("extend", None)
    if base_name is None:
        return table, sources
    base = (path.parent / base_name).resolve()
    if base in extending or base == path.resolve():
        chain = " -> ".join(str(p) for p in (*extending, path.resolve(), base))
        raise ConfigError(f"{path}: 'extend' makes a cycle: {chain}")
    if not base.is_file():
        raise ConfigError(f"{path}: 'extend': no such file: {base}")
    if base.name == "pyproject.toml" and "torchpatch" not in _read_toml(base).get("tool", {}):
        raise ConfigError(f"{path}: 'extend': {base} has no [tool.torchpatch] table")
    base_table, base_sources = load_config_with_sources(base, (*extending, path.resolve()))
    return {**base_table, **table}, {**base_sources, **sources}


def _own_table(path: Path) -> dict:
    data = _read_toml(path)
    table = data.get("tool", {}).get("torchpatch", {}) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchpatch] must be a table")
    table = dict(table)
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            import difflib

            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(KNOWN_KEYS))})"
            raise ConfigError(f"{path}: unknown key {key!r}{hint}")
        expected = KNOWN_KEYS[key]
        if not isinstance(value, expected):
            raise ConfigError(f"{path}: {key!r} must be a {'list' if expected is list else expected.__name__}")
        if expected is list and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: {key!r} must be a list of strings")
        if key == "per-file-ignores":
            for pattern, codes in value.items():
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"{path}: per-file-ignores[{pattern!r}] must be a list of codes")
        if key in ("target-torch", "min-torch"):
            try:
                known_release(value, key)
            except ValueError as error:
                raise ConfigError(f"{path}: {error}") from None
    return table


def known_release(text: str, name: str) -> Version:
    """A release torchpatch knows (2.4 to 2.15): outside that range no rule's versions can be trusted."""
    try:
        version = Version.parse(text)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if version not in KNOWN_RELEASES:
        raise ValueError(f"{name}: {text!r} is not a release torchpatch knows "
                         f"({KNOWN_RELEASES[0]} to {KNOWN_RELEASES[-1]})")
    return version


# -- the oldest torch the project supports, from its own pins -----------------------------------------

_PIN_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "requirements*.txt", "constraints*.txt",
              "requirements/*.txt", "environment*.yml", "environment*.yaml")


def min_torch_from_pins(root: Path) -> tuple[Version, str] | None:
    """The oldest known release some environment of the project allows, and the files that say so.

    Each requirements file (with what it includes) and each of ``pyproject.toml``, ``setup.cfg``,
    ``setup.py`` (its literal ``install_requires``/``extras_require``) and ``environment.yml`` describes
    an install of its own (an extra's pin counts only when the plain install pins no torch version): ``requirements/typing.txt`` pinning
    ``torch==2.8.0`` for a type checker does not lift the floor that ``requirements/base.txt`` sets at
    2.0 (torchmetrics 1.9.0). So the answer is the oldest release any of them allows — the
    conservative end, since a fix is safe only from min-torch. Constraint files (``constraints*.txt``)
    bound every install. A file whose torch entries carry no version says nothing and is skipped.
    """
    environments: list[list[tuple["SpecifierSet", str]]] = []
    constraints: list[tuple["SpecifierSet", str]] = []
    for pattern in _PIN_FILES:
        for path in sorted(root.glob(pattern)):
            # named from the root (``requirements/base.txt``); a file it includes keeps its own name
            pins = [(specifier, path.relative_to(root).as_posix() if name == path.name else name)
                    for specifier, name in torch_pins(path) if str(specifier)]
            if not pins:
                continue
            if path.name.startswith("constraints"):
                constraints.extend(pins)
            else:
                environments.append(pins)
    if not environments and not constraints:
        return None
    best: tuple[Version, str] | None = None
    for pins in environments or [[]]:
        found = pins + constraints
        oldest = _oldest_release_allowed(found)
        if best is None or oldest < best[0]:
            best = (oldest, ", ".join(sorted({name for _, name in found})))
    return best


def _oldest_release_allowed(pins: list[tuple["SpecifierSet", str]]) -> Version:
    from packaging.version import Version as PackagingVersion

    # ``torch==2.7.1+cu118`` (a CUDA build's local label) matches only versions that carry the label.
    labels = [""] + sorted({f"+{spec.version.partition('+')[2]}" for specifier, _ in pins for spec in specifier
                            if "+" in spec.version})
    for release in KNOWN_RELEASES:
        candidates = [PackagingVersion(f"{release}.{patch}{label}") for patch in range(0, 10) for label in labels]
        if any(all(spec.contains(c, prereleases=True) for spec, _ in pins) for c in candidates):
            return release
    # Pins that allow none of the known releases (e.g. torch<2.4): the oldest we know is the best answer.
    return OLDEST_KNOWN


#: Where a requirement naming torch must start, by file: a requirement string of setup.py or pyproject.toml is
#: a quoted literal (a Poetry entry a key at a line start, in quotes or after ``{``/``,`` in an inline table),
#: a requirements line starts the line. No match means no torch pin in the file, without parsing it.
_MAY_NAME_TORCH = {
    "setup.py": re.compile(r"""["']\s*torch\b""", re.IGNORECASE),
    "pyproject.toml": re.compile(r"""(?:["'{,]|^)\s*torch\b""", re.IGNORECASE | re.MULTILINE),
}
#: Where a requirements file's ``-r``/``--requirement``/``-c``/``--constraint`` include may start
#: (dependency_files._INCLUDE, which is imported only when this matches).
_MAY_INCLUDE = re.compile(r"^[ \t]*-[-rc]", re.MULTILINE)
_MAY_NAME_TORCH_IN_LINES = re.compile(r"^[ \t]*torch\b", re.IGNORECASE | re.MULTILINE)


def torch_pins(path: Path, seen: set[Path] | None = None) -> list[tuple["SpecifierSet", str]]:
    """The torch specifiers a dependency file declares (requirements whose markers hold without extras).

    A requirements file's ``-r other.txt`` and ``-c constraints.txt`` are followed (relative to the
    file, each file once): a pin written in an included file constrains the install just the same.
    """
    seen = set() if seen is None else seen
    try:
        resolved = path.resolve()
    except OSError:
        return []
    if resolved in seen:
        return []
    seen.add(resolved)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    pins = []
    if path.name == "setup.cfg" and not _setup_cfg_may_require(text):
        return pins  # no install_requires, no extras: configparser and the parsers stay unloaded
    if path.suffix == ".txt" and _MAY_INCLUDE.search(text):
        from torchpatch.dependency_files import requirement_includes

        for _, target in requirement_includes(text):
            included = path.parent / target
            if "://" not in target and included.is_file():
                pins.extend(torch_pins(included, seen))
    may_name_torch = _MAY_NAME_TORCH.get(path.name, _MAY_NAME_TORCH_IN_LINES if path.suffix == ".txt" else None)
    if may_name_torch is not None and may_name_torch.search(text) is None:
        return pins  # no requirement here can name torch: nothing to parse (nor packaging to import)
    # The parsers, imported only for a file that may pin torch (most projects' one-file check needs none).
    from torchpatch.dependency_files import core_requirements_in, requirements_in

    # An extra (``replay_buffer = ["torch>=2.7"]``) raises the floor only where it is installed: when the
    # plain install pins torch (torchrl's ``torch>=2.1.0``), that pin is the file's floor.
    core = core_requirements_in(path, text)
    core_pins = _torch_specifiers(core, path, versioned_only=True) if core is not None else []
    return pins + (core_pins or _torch_specifiers(requirements_in(path, text), path))


def _setup_cfg_may_require(text: str) -> bool:
    """Whether a setup.cfg can hold a requirement: ``[options] install_requires`` (configparser lowers option
    names, so any case) or an ``[options.extras_require]`` section (section names keep their case). Without
    either, dependency_files reads no requirement from it."""
    return "install_requires" in text.lower() or "options.extras_require" in text


def _torch_specifiers(spans, path: Path, versioned_only: bool = False) -> list[tuple["SpecifierSet", str]]:
    pins = []
    for span in spans:
        requirement = span.requirement
        if span.name != "torch" or requirement.url:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if versioned_only and not str(requirement.specifier):
            continue
        pins.append((requirement.specifier, path.name))
    return pins


# -- the settings that apply to each file -------------------------------------------------------------

class Overrides(FrozenRecord):
    """What the command line says; it wins over every configuration file."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_torch: str | None = None
    min_torch: str | None = None
    config: Path | None = None  # one file for every path (like ruff's --config)
    isolated: bool = False  # no configuration files, no pins
    exclude: tuple[str, ...] | None = None  # replaces the configuration's exclude
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None  # replaces the configuration's
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()


class SettingsResolver:
    """The Settings of each file: from the nearest torchpatch.toml / pyproject.toml [tool.torchpatch] above
    it, as in ruff, with the command line on top; built once per configuration (or project root)."""

    def __init__(self, overrides: Overrides) -> None:
        self.overrides = overrides
        self._config_of_folder: dict[Path, Path | None] = {}
        self._settings_of_parent: dict[Path, Settings] = {}  # a file's folder as given → its settings
        self._settings_of_folder: dict[Path, Settings] = {}
        self._settings: dict[tuple[str, Path | None], Settings] = {}
        self._packaging_folders: dict[str, bool] = {}  # folder → has packaging files (project_root)
        # Folders whose listing discovery read (note_listing), resolved, as text → their configuration files.
        self._listed: dict[str, frozenset[str]] = {}
        try:
            self._working_folder = os.getcwd()  # for_file's test whether a relative folder is one discovery listed
        except OSError:  # the working folder was removed: relative folders are resolved instead
            self._working_folder = ""
        if overrides.config is not None and not overrides.isolated and not overrides.config.is_file():
            raise ConfigError(f"--config {overrides.config}: no such file")
        try:  # the command line's own selectors, before any file is read
            Settings(select=None if overrides.select is None else list(overrides.select),
                     extend_select=list(overrides.extend_select), ignore=list(overrides.ignore),
                     per_file_ignores=_per_file_ignores(overrides)).validate()
        except SelectionError as error:
            raise ConfigError(str(error)) from None

    def note_listing(self, folder: str, entries: list) -> None:
        """What discovery read of a folder (resolved, as text): its configuration files, and whether it holds
        packaging files (project_root), so that neither needs a stat or a listing again."""
        self._listed[folder] = frozenset(entry.name for entry in entries
                                         if entry.name in CONFIG_FILE_NAMES and _is_file(entry))
        self._packaging_folders.setdefault(folder, _holds_packaging_files(entry.name for entry in entries))

    def for_folder(self, folder: Path) -> Settings:
        known = self._settings_of_folder.get(folder)
        if known is not None:
            return known
        spelled = str(folder)
        if self._listed.get(spelled) == frozenset() and self._packaging_folders.get(spelled) is False:
            # Listed by discovery (resolved, top-down) without a configuration or packaging file: the nearest
            # configuration and the project root are its parent's, and so are the settings (unless the parent's
            # root is only where the search started, for want of packaging files anywhere above).
            inherited = self._settings_of_folder.get(folder.parent)
            if inherited is not None and (inherited.config_path is not None or self.overrides.isolated
                                          or self._packaging_folders.get(str(inherited.project_root))):
                self._settings_of_folder[folder] = inherited
                return inherited
        # A folder discovery listed is resolved already (it walks resolved folders and enters no link).
        resolved = folder if spelled in self._listed else folder.resolve()
        settings = self._settings_of_folder[folder] = self._for_resolved_folder(resolved)
        return settings

    def _for_resolved_folder(self, folder: Path) -> Settings:
        if self.overrides.isolated:
            return self._build(None, None)
        if self.overrides.config is not None:
            return self._build(self.overrides.config.resolve(), None)
        config = self._nearest_config(folder)
        if config is not None:
            return self._build(config, None)
        return self._build(None, project_root(folder, self._packaging_folders, str(folder) in self._listed))

    def for_file(self, path: Path) -> Settings:
        folder = path.parent
        settings = self._settings_of_parent.get(folder)
        if settings is None:
            located = str(folder) if folder.is_absolute() else os.path.join(self._working_folder, folder)
            if located in self._listed:
                # A folder discovery listed, spelled as it was resolved (no link, no ``..``): no resolve needed.
                settings = self.for_folder(Path(located))
            else:
                resolved = path.resolve()
                settings = self.for_folder(resolved if resolved.is_dir() else resolved.parent)
            self._settings_of_parent[folder] = settings
        return settings

    def all_settings(self) -> list[Settings]:
        return list(self._settings.values())

    def _nearest_config(self, folder: Path) -> Path | None:
        walked = []
        found: Path | None = None
        for candidate in _upward(folder):
            if candidate in self._config_of_folder:
                found = self._config_of_folder[candidate]
                break
            walked.append(candidate)
            found = config_in(candidate, self._listed.get(str(candidate)))
            if found is not None:
                break
        for candidate in walked:
            self._config_of_folder[candidate] = found
        return found

    def _build(self, config_path: Path | None, root: Path | None) -> Settings:
        key = ("config" if config_path else "root", config_path or root)
        settings = self._settings.get(key)
        if settings is None:
            settings = self._settings[key] = self._settings_from(config_path, root)
        return settings

    def _settings_from(self, config_path: Path | None, root: Path | None) -> Settings:
        options = self.overrides
        config, sources = load_config_with_sources(config_path) if config_path is not None else ({}, {})
        if config_path is not None:
            root = config_path.parent
        settings = Settings(project_root=root or Path.cwd().resolve(), config_path=config_path)
        settings.key_sources = {key: str(path) for key, path in sources.items()}
        if options.select is not None:
            # ruff's precedence: a --select on the command line starts the selection anew, so the
            # configuration's extend-select and ignore no longer apply (--select TP301 reports TP301).
            settings.select = list(options.select)
            settings.extend_select, settings.ignore = list(options.extend_select), list(options.ignore)
        else:
            settings.select = config.get("select")
            settings.extend_select, settings.ignore = config.get("extend-select", []), config.get("ignore", [])
            # the command line's layer comes after the configuration's: its --extend-select beats the file's ignore
            settings.command_line_extend_select = list(options.extend_select)
            settings.command_line_ignore = list(options.ignore)
        settings.per_file_ignores = config.get("per-file-ignores", {})
        if options.per_file_ignores is not None or options.extend_per_file_ignores:
            settings.per_file_ignores = _per_file_ignores(options, settings.per_file_ignores)
        settings.exclude = list(options.exclude) if options.exclude is not None else config.get("exclude")
        settings.extend_exclude = [*config.get("extend-exclude", []), *options.extend_exclude]
        target = options.target_torch or config.get("target-torch")
        try:
            if target:
                settings.target = known_release(target, "--target-torch" if options.target_torch else "target-torch")
            minimum = options.min_torch or config.get("min-torch")
            if minimum:
                settings.min_torch = known_release(minimum, "--min-torch" if options.min_torch else "min-torch")
                settings.min_torch_source = "--min-torch" if options.min_torch else sources.get("min-torch", str(config_path))
            elif not options.isolated and root is not None:
                pinned = pins_of_project(root)
                if pinned is not None:
                    settings.min_torch, settings.min_torch_source = pinned
        except ValueError as error:
            raise ConfigError(f"{config_path}: {error}" if config_path and not str(error).startswith("--") else str(error)) from None
        if settings.min_torch > settings.target and not (options.min_torch and options.target_torch):
            # A pin newer than the default target: migrate to at least what the project already requires.
            settings.target = max(settings.target, settings.min_torch)
        try:
            settings.validate()
        except SelectionError as error:
            raise ConfigError(f"{config_path}: {error}" if config_path else str(error)) from None
        return settings


def _per_file_ignores(options: Overrides, configured: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """The configuration's per-file-ignores, replaced by --per-file-ignores and added to by
    --extend-per-file-ignores."""
    result = {pattern: list(codes) for pattern, codes in (configured or {}).items()}
    if options.per_file_ignores is not None:
        result = {}
        for pattern, codes in options.per_file_ignores:
            result.setdefault(pattern, []).extend(codes)
    for pattern, codes in options.extend_per_file_ignores:
        result.setdefault(pattern, []).extend(codes)
    return result


def pins_of_project(folder: Path) -> tuple[Version, str] | None:
    """min-torch from the project's pins, read from ``folder`` upwards: a nested configuration file that sets
    only ``select`` keeps the floor that the project above it pins. The search stops at the project's root (a
    folder with setup.py, setup.cfg, a packaging pyproject.toml or .git), so one project never takes another's
    pins. The answer names the files with their paths."""
    start = folder.resolve()
    for candidate in (start, *start.parents):
        pinned = min_torch_from_pins(candidate)
        if pinned is not None:
            version, names = pinned
            return version, ", ".join(str(candidate / name) for name in names.split(", "))
        if _is_project_root(candidate):
            return None
    return None


def _is_project_root(folder: Path) -> bool:
    if any((folder / name).exists() for name in ("setup.py", "setup.cfg", ".git")):
        return True
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
        return True
    return any(key in data for key in ("project", "build-system")) or "poetry" in data.get("tool", {})


def project_root(folder: Path, known: dict[str, bool] | None = None, resolved_folder: bool = False) -> Path:
    """Where a project without a torchpatch configuration starts: the nearest folder with packaging files.
    ``known`` remembers which folders have them (a resolver's, across the folders of one run);
    ``resolved_folder``: ``folder`` is known to be a resolved folder (no resolve, no stat)."""
    start = folder if resolved_folder else folder.resolve()
    if not resolved_folder and start.is_file():
        start = start.parent
    known = {} if known is None else known
    for candidate in _upward(start):
        key = str(candidate)
        found = known.get(key)
        if found is None:
            found = known[key] = _has_packaging_files(key)
        if found:
            return candidate
    return start


def _upward(folder: Path) -> Iterator[Path]:
    """``folder``, then its parents up to the root, each built when reached (``(folder, *folder.parents)`` builds
    them all: asked for each folder of a tree, where the first one or two usually answer)."""
    while True:
        yield folder
        parent = folder.parent
        if parent == folder:
            return
        folder = parent


_PACKAGING_FILES = frozenset({"pyproject.toml", "setup.cfg", "setup.py", ".git"})


def _has_packaging_files(folder: str) -> bool:
    try:
        with os.scandir(folder) as listing:
            return _holds_packaging_files(entry.name for entry in listing)
    except OSError:
        return False


def _holds_packaging_files(names) -> bool:
    return any(name in _PACKAGING_FILES or (name.startswith("requirements") and name.endswith(".txt")) for name in names)


def _is_file(entry) -> bool:
    """``Path.is_file`` of a listed entry (links followed), from the listing's file type where it has one."""
    try:
        return entry.is_file()
    except OSError:
        return False
