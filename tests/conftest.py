"""Shared test helpers: lint and fix snippets in memory, the way the CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchpatch.engine.linter import check_file
from torchpatch.engine.settings import Settings
from torchpatch.versions import Version


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own result cache: a test that patches a rule must never read another's results."""
    monkeypatch.setenv("TORCHPATCH_CACHE_DIR", str(tmp_path_factory.mktemp("torchpatch-cache")))


def make_settings(target: str | None = None, min_torch: str | None = None, select: list[str] | None = None) -> Settings:
    settings = Settings()
    if target:
        settings.target = Version.parse(target)
    if min_torch:
        settings.min_torch = Version.parse(min_torch)
    if select is not None:
        settings.select = select
    return settings


@pytest.fixture
def lint(tmp_path: Path):
    """lint(code, **settings) -> FileResult for a file holding ``code``."""

    def run(code: str, name: str = "snippet.py", fix: bool = False, unsafe_fixes: bool = False, **options):
        path = tmp_path / name
        path.write_text(code, encoding="utf-8", newline="")
        return check_file(path, make_settings(**options), fix=fix, unsafe_fixes=unsafe_fixes)

    return run


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder that is the working directory (test files may override it with a richer one)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
