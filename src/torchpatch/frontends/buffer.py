"""Checking one file's text for an editor or flake8, with the settings `torchpatch check FILE` would use."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from torchpatch.engine.linter import FileResult, check_source
from torchpatch.engine.settings import Settings
from torchpatch.engine.source import Source
from torchpatch.rules import all_rules
from torchpatch.rules.base import Rule

#: Files whose change can change a file's settings: configuration and the pins min-torch is read from.
SETTINGS_FILES = ("pyproject.toml", "torchpatch.toml", "setup.cfg", "requirements*.txt", "constraints*.txt")


class SettingsError(Exception):
    """The workspace configuration is invalid; the message is the CLI's one-line error."""


def settings_for(path: Path) -> Settings:
    """The settings `torchpatch check PATH` resolves: the nearest configuration, the project's pins, the defaults."""
    from torchpatch.frontends import check
    from torchpatch.frontends.cli import UsageError

    parser = argparse.ArgumentParser(add_help=False)
    check.add_arguments(parser)
    existing = path if path.exists() else _existing_parent(path)
    args = parser.parse_args([str(existing)])
    try:
        return check.build_settings(args)
    except UsageError as error:
        raise SettingsError(str(error)) from None


def _existing_parent(path: Path) -> Path:
    """An unsaved buffer's folder (or the nearest one that exists), so the configuration is still found."""
    for folder in path.absolute().parents:
        if folder.is_dir():
            return folder
    return Path.cwd()


class SettingsCache:
    """Settings per folder, kept until a configuration or pin file changes (the rule index is built once)."""

    def __init__(self) -> None:
        self._by_folder: dict[Path, Settings] = {}

    def get(self, path: Path) -> Settings:
        folder = path.absolute().parent
        settings = self._by_folder.get(folder)
        if settings is None:
            settings = self._by_folder[folder] = settings_for(path)
        return settings

    def clear(self) -> None:
        self._by_folder.clear()


def is_settings_file(path: Path) -> bool:
    return any(path.match(pattern) for pattern in SETTINGS_FILES)


def check_text(path: Path, text: str, settings: Settings, fix: bool = False, unsafe_fixes: bool = False) -> FileResult:
    """Findings for a Python file whose current text is ``text`` (saved or not); with ``fix``, the fixed text too."""
    return check_source(Source(path=path, text=text), settings, fix=fix, unsafe_fixes=unsafe_fixes)


def syntax_error_position(text: str) -> tuple[int, int]:
    """Where the parser gives up on ``text``: 1-based row, 0-based character column."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        return max(error.lineno or 1, 1), max((error.offset or 1) - 1, 0)
    except (ValueError, RecursionError, MemoryError):
        pass
    return 1, 0


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None
