"""Configuration: ``[tool.torchpatch]`` in pyproject.toml or a torchpatch.toml, and the project's torch pins."""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version as PackagingVersion

from torchpatch.versions import KNOWN_RELEASES, OLDEST_KNOWN, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

KNOWN_KEYS = {
    "select": list, "extend-select": list, "ignore": list, "exclude": list, "extend-exclude": list,
    "per-file-ignores": dict, "target-torch": str, "min-torch": str,
}


class ConfigError(ValueError):
    """A configuration problem; the message names the file and the key."""


def find_config(start: Path) -> Path | None:
    """The nearest torchpatch.toml, or pyproject.toml with a [tool.torchpatch] table, from start upwards."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        candidate = folder / "torchpatch.toml"
        if candidate.is_file():
            return candidate
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
                continue
            if "torchpatch" in data.get("tool", {}):
                return candidate
    return None


def load_config(path: Path) -> dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    table = data.get("tool", {}).get("torchpatch", {}) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchpatch] must be a table")
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
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
                Version.parse(value)
            except ValueError as error:
                raise ConfigError(f"{path}: {key}: {error}") from None
    return table


# -- the oldest torch the project supports, from its own pins -----------------------------------------

_REQUIREMENT_FILES = ("requirements*.txt", "constraints*.txt", "requirements/*.txt")


def min_torch_from_pins(root: Path) -> tuple[Version, str] | None:
    """The oldest known release allowed by every torch pin found in the project's files, and where it came from."""
    found: list[tuple[SpecifierSet, str]] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        found.extend(_pyproject_pins(pyproject))
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        found.extend(_setup_cfg_pins(setup_cfg))
    for pattern in _REQUIREMENT_FILES:
        for path in sorted(root.glob(pattern)):
            found.extend(_requirements_pins(path))
    if not found:
        return None
    for release in KNOWN_RELEASES:
        candidates = [PackagingVersion(f"{release}.{patch}") for patch in range(0, 10)]
        if any(all(spec.contains(c, prereleases=True) for spec, _ in found) for c in candidates):
            return release, ", ".join(sorted({where for _, where in found}))
    # Pins that allow none of the known releases (e.g. torch<2.4): the oldest we know is the best answer.
    return OLDEST_KNOWN, ", ".join(sorted({where for _, where in found}))


def _torch_spec(line: str, where: str) -> tuple[SpecifierSet, str] | None:
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-"):
        return None
    try:
        requirement = Requirement(line)
    except InvalidRequirement:
        return None
    if requirement.name.lower() != "torch" or requirement.url:
        return None
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return None
    return requirement.specifier, where


def _pyproject_pins(path: Path) -> list[tuple[SpecifierSet, str]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return []
    project = data.get("project", {})
    lines = list(project.get("dependencies", []) or [])
    for extra in (project.get("optional-dependencies", {}) or {}).values():
        lines.extend(extra or [])
    pins = [_torch_spec(str(line), path.name) for line in lines]
    return [pin for pin in pins if pin]


def _setup_cfg_pins(path: Path) -> list[tuple[SpecifierSet, str]]:
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    lines: list[str] = []
    if parser.has_option("options", "install_requires"):
        lines.extend(parser.get("options", "install_requires").splitlines())
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            lines.extend(value.splitlines())
    pins = [_torch_spec(line, path.name) for line in lines]
    return [pin for pin in pins if pin]


def _requirements_pins(path: Path) -> list[tuple[SpecifierSet, str]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    pins = [_torch_spec(re.sub(r"\s+--hash=\S+", "", line), path.name) for line in text.splitlines()]
    return [pin for pin in pins if pin]
