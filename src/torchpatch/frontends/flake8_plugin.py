"""flake8 plugin (codes ``TP``): torchpatch's findings in every tool and editor that runs flake8."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

from torchpatch import __version__
from torchpatch.frontends.buffer import SettingsCache, SettingsError, check_text

UNCHECKED_CODE = "TP001"

# One per flake8 process: flake8 builds a checker per file, the settings are per folder.
_SETTINGS = SettingsCache()


class TorchpatchChecker:
    """Registered as the ``TP`` entry point of ``flake8.extension``; flake8 passes the arguments by name.

    The settings come from the project's configuration and pins, as for ``torchpatch check FILE``;
    flake8's own ``--select``/``--ignore`` and ``# noqa`` then apply on top.
    """

    name = "torchpatch"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        path = Path(self.filename if self.filename not in ("-", "stdin") else "stdin.py")
        try:
            settings = _SETTINGS.get(path)
        except SettingsError as error:
            yield 1, 0, f"{UNCHECKED_CODE} file not checked: {error}", type(self)
            return
        result = check_text(path, "".join(self.lines), settings)
        if result.error is not None and result.internal_error:
            # A syntax error is flake8's own E999; anything else must not look like a clean file.
            yield 1, 0, f"{UNCHECKED_CODE} file not checked: {result.error}", type(self)
        for finding in result.findings:
            # Our columns are 0-based characters; flake8 adds the 1 itself when it prints.
            yield finding.row, finding.column, f"{finding.code} {finding.message}", type(self)
