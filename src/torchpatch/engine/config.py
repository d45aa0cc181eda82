"""Configuration: ``[tool.torchpatch]`` in pyproject.toml or a torchpatch.toml, and the project's torch pins."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from torchpatch.engine.dependencies import requirement_includes, requirements_in
from torchpatch.versions import KNOWN_RELEASES, OLDEST_KNOWN, Version

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

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

_PIN_FILES = ("pyproject.toml", "setup.cfg", "requirements*.txt", "constraints*.txt", "requirements/*.txt",
              "environment*.yml", "environment*.yaml")


def min_torch_from_pins(root: Path) -> tuple[Version, str] | None:
    """The oldest known release allowed by every torch pin found in the project's files, and where it came from."""
    from packaging.version import Version as PackagingVersion

    found: list[tuple["SpecifierSet", str]] = []
    seen: set[Path] = set()
    for pattern in _PIN_FILES:
        for path in sorted(root.glob(pattern)):
            found.extend(torch_pins(path, seen))
    if not found:
        return None
    where = ", ".join(sorted({name for _, name in found}))
    for release in KNOWN_RELEASES:
        candidates = [PackagingVersion(f"{release}.{patch}") for patch in range(0, 10)]
        if any(all(spec.contains(c, prereleases=True) for spec, _ in found) for c in candidates):
            return release, where
    # Pins that allow none of the known releases (e.g. torch<2.4): the oldest we know is the best answer.
    return OLDEST_KNOWN, where


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
    if path.suffix == ".txt":
        for _, target in requirement_includes(text):
            included = path.parent / target
            if "://" not in target and included.is_file():
                pins.extend(torch_pins(included, seen))
    for span in requirements_in(path, text):
        requirement = span.requirement
        if span.name != "torch" or requirement.url:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        pins.append((requirement.specifier, path.name))
    return pins
