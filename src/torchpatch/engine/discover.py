"""Finding the files to check: .py, .pyi and .ipynb under the given paths, minus excluded and git-ignored ones.

Patterns have gitignore semantics (``pathspec``), as in ruff: a pattern without a slash matches a name at
any depth, one with a slash is anchored at the project root, ``**`` crosses folders, and a matched folder
takes everything under it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Callable, Iterable

from torchpatch._record import Record
from torchpatch.dependency_names import is_dependency_file, may_be_dependency_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    import pathspec

SUFFIXES = frozenset({".py", ".pyi", ".ipynb"})
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", ".ipynb_checkpoints", "__pycache__", "build", "dist", "node_modules", "site-packages",
    "__pypackages__", ".eggs", ".torchpatch_cache",
)
IGNORE_FILES = (".gitignore", ".ignore")
_GLOB_CHARS = re.compile(r"[*?\[\]!\\/]")


def compile_patterns(patterns: Iterable[str]) -> pathspec.PathSpec:
    import pathspec  # imported on first use: a tenth of the start-up of a run that needs no pattern

    return pathspec.PathSpec.from_lines("gitignore", [p for p in patterns if p.strip()])


class FileFilter(Record):
    """The exclude patterns of one configuration, matched relative to its project root."""

    root: Path
    patterns: tuple[str, ...]

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self._spec: pathspec.PathSpec | None = None
        # During a walk every folder above an entry was already matched (and an excluded one not entered),
        # so a plain name pattern (``build``, ``.venv``) only needs the entry's own name.
        plain = [p.strip() for p in self.patterns if p.strip() and not _GLOB_CHARS.search(p.strip().rstrip("/"))]
        self._names = frozenset(p for p in plain if not p.endswith("/"))
        self._folder_names = frozenset(p.rstrip("/") for p in plain if p.endswith("/"))
        self._rest_patterns = [p for p in self.patterns if p.strip() and p.strip() not in plain]
        self._rest: pathspec.PathSpec | None = None
        # Every pattern a plain name as gitignore reads it (no comment, no spaces around it): excludes() can
        # decide without pathspec.
        self._names_only = all(p == p.strip() and not p.startswith("#") for p in plain) and bool(plain)
        self._root_prefix = self.root.as_posix().rstrip("/") + "/"

    def excludes_entry(self, name: str, located: str, is_dir: bool, base: str | None = None) -> bool:
        """``excludes`` for an entry met while walking: ``located`` is its absolute path (folders resolved)
        as text, and its folders are known not to be excluded."""
        if name in self._names or (is_dir and name in self._folder_names):
            return True
        if not self._rest_patterns:
            return False
        if self._rest is None:
            self._rest = compile_patterns(self._rest_patterns)
        prefix = base.rstrip("/") + "/" if base is not None else self._root_prefix
        relative = located[len(prefix):] if located.startswith(prefix) else name
        return self._rest.match_file(relative + "/" if is_dir else relative)

    def excludes(self, path: Path, is_dir: bool = False, base: Path | None = None) -> bool:
        """Whether the patterns exclude ``path`` (absolute, folders resolved); with ``base``, the path is
        matched relative to it (the inside of an excluded folder that was named explicitly)."""
        relative = _relative(path, base or self.root)
        if relative is None:
            relative = path.name  # outside the project: only name patterns can apply
        if not self._rest_patterns and self._names_only:
            # Only plain names (the default excludes): gitignore's ``name`` matches an entry of that name at any
            # depth and all under it, ``name/`` a folder of that name; without importing pathspec.
            if relative == "." and not {".", ".."} & (self._names | self._folder_names):
                return False  # the base itself (a folder named on the command line): no name to match
            parts = relative.split("/")
            if all(part not in ("", ".", "..") for part in parts):
                folders = parts if is_dir else parts[:-1]
                return any(part in self._names for part in parts) or any(part in self._folder_names for part in folders)
        if self._spec is None:
            self._spec = compile_patterns(self.patterns)
        return self._spec.match_file(relative + "/" if is_dir else relative)


class _IgnoreFile(Record):
    """One .gitignore or .ignore file: its folder and its patterns."""

    folder: Path
    spec: pathspec.GitIgnoreSpec
    #: Above a folder named on the command line: its patterns filter that folder's contents but never the folder
    #: itself (git and ruff: ``repo/.gitignore`` with ``vendor/`` does not hide ``torchpatch check vendor/lib``).
    above_named_folder: bool = False

    @property
    def prefix(self) -> str:
        return self.folder.as_posix().rstrip("/") + "/"

    def decides(self, relative: str) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None; the last matching pattern decides, as in git."""
        if not self.above_named_folder:
            return self.spec.check_file(relative).include
        decision = None
        for pattern in self.spec.patterns:
            if pattern.include is None or not _matches_itself(pattern.regex, relative):
                continue
            decision = pattern.include
        return decision


def _matches_itself(regex, relative: str) -> bool:
    """Whether a gitignore pattern matches the entry itself, not only a folder above it: pathspec's patterns
    match a folder's contents through a prefix ending at the ``ps_d`` group; an entry met during the walk has
    no excluded folder between it and the folder named, so such a prefix match is one of a folder above."""
    match = regex.match(relative)
    if match is None:
        return False
    if "ps_d" in regex.groupindex and match.group("ps_d") is not None:
        return match.end("ps_d") == len(relative)
    return True


def _read_ignore_files(folder: Path, names: tuple[str, ...] = IGNORE_FILES,
                       above_named_folder: bool = False) -> list[_IgnoreFile]:
    found = []
    for name in names:
        candidate = folder / name
        try:
            lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        import pathspec

        found.append(_IgnoreFile(folder.resolve(), pathspec.GitIgnoreSpec.from_lines(lines), above_named_folder))
    return found


def _ignored(located: str, is_dir: bool, ignore_files: list[_IgnoreFile]) -> bool:
    """Git's rule: the deepest ignore file with a matching pattern decides (a ``!`` pattern re-includes)."""
    for ignore_file in reversed(ignore_files):
        prefix = ignore_file.prefix
        if not located.startswith(prefix):
            continue
        relative = located[len(prefix):]
        decision = ignore_file.decides(relative + "/" if is_dir else relative)
        if decision is not None:
            return decision
    return False


def repository_root(folder: Path) -> Path | None:
    """The root of the git repository that holds ``folder`` (resolved), if any."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _ancestor_ignore_files(start: Path) -> tuple[list[_IgnoreFile], bool]:
    """The ignore files above a folder named on the command line, and whether it lies in a git repository.

    In a repository: its ``.gitignore`` and ``.ignore`` files from the repository's root down. Outside one,
    ``.gitignore`` files mean nothing (git and ruff ignore them) and only ``.ignore`` files count, up to the
    working directory (never the whole file system)."""
    root = repository_root(start)
    if root == start:
        return [], True
    folders = []
    if root is not None:
        for folder in start.parents:
            folders.append(folder)
            if folder == root:
                break
        names = IGNORE_FILES
    else:
        cwd = Path.cwd().resolve()
        if cwd != start and cwd not in start.parents:
            return [], False
        for folder in start.parents:
            folders.append(folder)
            if folder == cwd:
                break
        names = (".ignore",)
    return [ignore for folder in reversed(folders) for ignore in _read_ignore_files(folder, names, True)], root is not None


def discover(paths: Iterable[Path], filter_for: Callable[[Path], FileFilter], respect_gitignore: bool = True,
             force_exclude: bool = False, include_dependency_files: bool = True,
             note_listing: Callable[[str, list[os.DirEntry]], None] | None = None) -> list[Path]:
    """Files to check, sorted, each once. ``filter_for(folder)`` gives the exclusions of the configuration
    that governs that folder. A file given explicitly is checked whatever its suffix and even if excluded,
    as in ruff, unless ``force_exclude``. ``note_listing(folder, entries)``, when given, is told each folder's
    listing (the folder resolved, as text) before ``filter_for`` is asked about it (SettingsResolver.note_listing:
    its configuration and project-root lookups then need no listing or stat of their own)."""
    seen: set[str] = set()
    found: list[tuple[str, Path]] = []

    def add(candidate: Path, located: str, real: str | None) -> None:
        """``located``: the candidate's absolute path with its folders resolved; ``real``: where a link points."""
        real = real or located
        if real not in seen:
            seen.add(real)
            found.append((located, candidate))

    resolved_folders: dict[str, str] = {}  # the files named explicitly are mostly in a few folders

    for path in paths:
        if path.is_file() or not path.exists():
            if force_exclude and explicitly_excluded(path, filter_for):
                continue
            parent = str(path.parent)
            real_parent = resolved_folders.get(parent)
            if real_parent is None:
                real_parent = resolved_folders[parent] = os.path.realpath(parent).rstrip("/")
            located = f"{real_parent}/{path.name}"
            # os.path.realpath(path) resolves the folder, then the name when it is a link: the same string
            # unless the name is ``..`` (a Path keeps it) or a link.
            add(path, located, os.path.realpath(path) if path.name in ("", "..") or os.path.islink(path) else located)
            continue
        resolved_root = path.resolve()
        if force_exclude and resolved_root != filter_for(resolved_root).root \
                and explicitly_excluded(path, filter_for):
            continue
        # An excluded folder named explicitly is checked (as in ruff): match below it, not from the project root.
        base = resolved_root if explicitly_excluded(path, filter_for) else None
        inherited, in_repository = _ancestor_ignore_files(resolved_root) if respect_gitignore else ([], False)
        base_text = base.as_posix() if base is not None else None
        # (folder as given, the same folder resolved, the ignore files that apply in it, inside a git repository)
        pending = [(path, resolved_root.as_posix(), inherited, in_repository)]
        while pending:
            folder, real_folder, stack, in_repository = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                continue
            if note_listing is not None:
                note_listing(real_folder, entries)
            if respect_gitignore:
                names = {entry.name for entry in entries}
                in_repository = in_repository or ".git" in names
                # .gitignore counts only inside a git repository, as in git and ruff; .ignore everywhere.
                readable = IGNORE_FILES if in_repository else (".ignore",)
                if any(name in names for name in readable):
                    stack = stack + _read_ignore_files(Path(real_folder), readable)
            folder_filter = filter_for(Path(real_folder))
            for entry in entries:
                name = entry.name
                located = f"{real_folder.rstrip('/')}/{name}"
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)  # a linked folder is not entered, as os.walk
                except OSError:
                    continue
                if is_dir:
                    if folder_filter.excludes_entry(name, located, True, base_text) \
                            or os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                        continue
                    if respect_gitignore and stack and _ignored(located, True, stack):
                        continue
                    pending.append((folder / name, located, stack, in_repository))
                    continue
                suffix = name[name.rfind("."):] if "." in name else ""
                if suffix not in SUFFIXES and not (include_dependency_files and may_be_dependency_file(name)
                                                   and is_dependency_file(folder / name)):
                    continue
                if folder_filter.excludes_entry(name, located, False, base_text):
                    continue
                if respect_gitignore and stack and _ignored(located, False, stack):
                    continue
                add(folder / name, located, os.path.realpath(entry.path) if entry.is_symlink() else None)
    found.sort(key=lambda item: item[0])
    return [candidate for _, candidate in found]


def explicitly_excluded(path: Path, filter_for: Callable[[Path], FileFilter]) -> bool:
    resolved = path.resolve()
    file_filter = filter_for(resolved.parent if not resolved.is_dir() else resolved)
    return file_filter.excludes(resolved, is_dir=resolved.is_dir())


def _relative(path: Path, base: Path) -> str | None:
    """``path`` (absolute, folders resolved) relative to ``base``, or None outside it."""
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None
