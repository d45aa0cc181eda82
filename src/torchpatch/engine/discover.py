"""Finding the files to check: .py, .pyi and .ipynb under the given paths, minus excluded and git-ignored ones.

Patterns have gitignore semantics (``pathspec``), as in ruff: a pattern without a slash matches a name at
any depth, one with a slash is anchored at the project root, ``**`` crosses folders, and a matched folder
takes everything under it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import pathspec

from torchpatch.engine.dependencies import is_dependency_file

SUFFIXES = frozenset({".py", ".pyi", ".ipynb"})
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", ".ipynb_checkpoints", "__pycache__", "build", "dist", "node_modules", "site-packages",
    "__pypackages__", ".eggs", ".torchpatch_cache",
)
IGNORE_FILES = (".gitignore", ".ignore")


def compile_patterns(patterns: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.PathSpec.from_lines("gitignore", [p for p in patterns if p.strip()])


@dataclass
class FileFilter:
    """The exclude patterns of one configuration, matched relative to its project root."""

    root: Path
    patterns: tuple[str, ...]
    spec: pathspec.PathSpec = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.spec = compile_patterns(self.patterns)

    def excludes(self, path: Path, is_dir: bool = False, base: Path | None = None) -> bool:
        """Whether the patterns exclude ``path``; with ``base``, the path is matched relative to it (the inside
        of an excluded folder that was named explicitly)."""
        relative = _relative(path, base or self.root)
        if relative is None:
            relative = path.name  # outside the project: only name patterns can apply
        return self.spec.match_file(relative + "/" if is_dir else relative)


@dataclass
class _IgnoreFile:
    folder: Path
    spec: pathspec.GitIgnoreSpec


def _read_ignore_files(folder: Path) -> list[_IgnoreFile]:
    found = []
    for name in IGNORE_FILES:
        candidate = folder / name
        try:
            lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        found.append(_IgnoreFile(folder.resolve(), pathspec.GitIgnoreSpec.from_lines(lines)))
    return found


def _ignored(path: Path, is_dir: bool, ignore_files: list[_IgnoreFile]) -> bool:
    """Git's rule: the deepest ignore file with a matching pattern decides (a ``!`` pattern re-includes)."""
    for ignore_file in reversed(ignore_files):
        relative = _relative(path, ignore_file.folder)
        if relative is None:
            continue
        result = ignore_file.spec.check_file(relative + "/" if is_dir else relative)
        if result.include is not None:
            return result.include
    return False


def _ancestor_ignore_files(start: Path) -> list[_IgnoreFile]:
    """Ignore files above a walked folder, up to the root of its git repository, or outside a repository up
    to the working directory (never the whole file system)."""
    folders = []
    cwd = Path.cwd().resolve()
    for folder in start.parents:
        folders.append(folder)
        if (folder / ".git").exists() or folder == cwd:
            break
    else:
        return []
    return [ignore for folder in reversed(folders) for ignore in _read_ignore_files(folder)]


def discover(paths: Iterable[Path], filter_for: Callable[[Path], FileFilter], respect_gitignore: bool = True,
             force_exclude: bool = False, include_dependency_files: bool = True) -> list[Path]:
    """Files to check, sorted, each once. ``filter_for(folder)`` gives the exclusions of the configuration
    that governs that folder. A file given explicitly is checked whatever its suffix and even if excluded,
    as in ruff, unless ``force_exclude``."""
    seen: set[Path] = set()
    found: list[tuple[str, Path]] = []

    def add(candidate: Path) -> None:
        resolved = candidate.resolve()
        if resolved not in seen:
            seen.add(resolved)
            found.append((resolved.as_posix(), candidate))

    for path in paths:
        if path.is_file() or not path.exists():
            if force_exclude and _explicitly_excluded(path, filter_for):
                continue
            add(path)
            continue
        resolved_root = path.resolve()
        if force_exclude and resolved_root != filter_for(resolved_root).root \
                and _explicitly_excluded(path, filter_for):
            continue
        # An excluded folder named explicitly is checked (as in ruff): match below it, not from the project root.
        base = resolved_root if _explicitly_excluded(path, filter_for) else None
        inherited = _ancestor_ignore_files(resolved_root) if respect_gitignore else []
        ignore_stack: dict[Path, list[_IgnoreFile]] = {}
        for directory, subdirectories, files in os.walk(path):
            directory_path = Path(directory)
            parent_stack = ignore_stack.pop(directory_path, None)
            if parent_stack is None:
                parent_stack = inherited
            stack = parent_stack + _read_ignore_files(directory_path) if respect_gitignore else []
            folder_filter = filter_for(directory_path.resolve())
            kept = []
            for name in sorted(subdirectories):
                child = directory_path / name
                if folder_filter.excludes(child, True, base) or (child / "pyvenv.cfg").exists():
                    continue
                if respect_gitignore and _ignored(child.resolve(), True, stack):
                    continue
                kept.append(name)
                ignore_stack[child] = stack
            subdirectories[:] = kept
            for name in sorted(files):
                candidate = directory_path / name
                if candidate.suffix not in SUFFIXES and not (include_dependency_files and is_dependency_file(candidate)):
                    continue
                if folder_filter.excludes(candidate, False, base):
                    continue
                if respect_gitignore and _ignored(candidate.resolve(), False, stack):
                    continue
                add(candidate)
    found.sort(key=lambda item: item[0])
    return [candidate for _, candidate in found]


def _explicitly_excluded(path: Path, filter_for: Callable[[Path], FileFilter]) -> bool:
    resolved = path.resolve()
    file_filter = filter_for(resolved.parent if not resolved.is_dir() else resolved)
    return file_filter.excludes(resolved, is_dir=resolved.is_dir())


def _relative(path: Path, base: Path) -> str | None:
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return None
