"""Finding the files to check: .py, .pyi and .ipynb under the given paths, minus excluded folders."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterable, Iterator

from torchpatch.engine.dependencies import is_dependency_file

SUFFIXES = frozenset({".py", ".pyi", ".ipynb"})
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", ".ipynb_checkpoints", "__pycache__", "build", "dist", "node_modules", "site-packages",
    "__pypackages__", ".eggs",
)


def _excluded(name: str, relative: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) \
                or fnmatch.fnmatch(relative, pattern + "/*"):
            return True
    return False


def discover(paths: Iterable[Path], exclude: Iterable[str], root: Path | None = None,
             include_dependency_files: bool = True) -> Iterator[Path]:
    """Files to check, in a stable order. A path given explicitly is checked even if its folder is excluded,
    as in ruff; files given explicitly are checked whatever their suffix."""
    patterns = tuple(exclude)
    seen: set[Path] = set()
    base = (root or Path.cwd()).resolve()
    for path in paths:
        if path.is_file() or not path.exists():
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield path
            continue
        for directory, subdirectories, files in os.walk(path):
            directory_path = Path(directory)
            subdirectories[:] = sorted(
                d for d in subdirectories
                if not _excluded(d, _relative(directory_path / d, base), patterns)
                and not (directory_path / d / "pyvenv.cfg").exists()
            )
            for name in sorted(files):
                candidate = directory_path / name
                if candidate.suffix not in SUFFIXES and not (include_dependency_files and is_dependency_file(candidate)):
                    continue
                if _excluded(name, _relative(candidate, base), patterns):
                    continue
                resolved = candidate.resolve()
                if resolved not in seen:
                    seen.add(resolved)
                    yield candidate


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
