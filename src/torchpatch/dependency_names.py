"""Which files are dependency files, and the lazy ``tomllib``: the little of :mod:`torchpatch.dependency_files` that
discovery, the linter and the settings need for every run. Reading a dependency file's requirements (the
parsers, their patterns and records) is imported only when a file may pin torch (issue 27: a one-file check
of a project whose packaging files name no torch requirement never loads it)."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from pathlib import Path


class _LazyTomllib:
    """``tomllib`` (``tomli`` before Python 3.11), imported when a TOML file is first read: a check whose
    project has no pyproject.toml never needs it (it and the ``datetime`` it imports are a tenth of start-up)."""

    def __getattr__(self, name: str):
        if sys.version_info >= (3, 11):
            import tomllib as module
        else:  # pragma: no cover - exercised on Python 3.10
            import tomli as module
        return getattr(module, name)


tomllib = _LazyTomllib()

DEPENDENCY_FILE_PATTERNS = ("requirements*.txt", "constraints*.txt", "pyproject.toml", "setup.cfg",
                            "environment*.yml", "environment*.yaml")


#: Folders whose ``.txt`` files are requirements files, one or two levels down
#: (``requirements/base.txt``, ``requirements/pytorch/test.txt``: lightning, torchmetrics).
REQUIREMENT_FOLDERS = ("requirements", "constraints")


#: ``fnmatch.fnmatch(name, pattern)`` for any of the patterns (fnmatch compares the ``normcase`` of both).
_dependency_name_match = re.compile("|".join(fnmatch.translate(os.path.normcase(pattern))
                                             for pattern in DEPENDENCY_FILE_PATTERNS)).match


def may_be_dependency_file(name: str) -> bool:
    """False when no file of this name is a dependency file, wherever it lies (is_dependency_file then says False):
    discovery asks it of every listed name before it builds a path."""
    return name.endswith(".txt") or _dependency_name_match(os.path.normcase(name)) is not None


def is_dependency_file(path: Path) -> bool:
    if path.name.endswith((".py", ".pyi", ".ipynb")):
        return False  # what is checked most: no pattern ends so (asked twice per file of a tree)
    if _dependency_name_match(os.path.normcase(path.name)):  # fnmatch of each pattern, in one regex
        return True
    return path.suffix == ".txt" and any(folder.name in REQUIREMENT_FOLDERS for folder in path.parents[:2])
