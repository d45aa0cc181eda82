"""The documentation site builds with --strict, its generated pages are fresh, and the install lines are honest."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import pytest

from torchpatch.docs import render_settings_reference
from torchpatch.engine.config import SETTINGS, load_config
from torchpatch.frontends.cli import main
from torchpatch.frontends.docs_site import render_everything

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").rglob("*.md"))
GIT_INSTALL = "git+https://github.com/torchpatch/torchpatch"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs and mkdocs-material are not installed (extra: docs)")
def test_site_builds_strict(tmp_path: Path) -> None:
    # mkdocs.yml sets `validation` so that a broken link or anchor and a page missing from the nav are warnings,
    # and --strict makes any warning fail the build.
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stdout + build.stderr
    assert (tmp_path / "site" / "settings" / "index.html").is_file()
    assert (tmp_path / "site" / "rules" / "index.html").is_file()


def test_generated_pages_are_fresh() -> None:
    stale = sorted(str(path.relative_to(ROOT)) for path, text in render_everything(ROOT).items()
                   if not path.is_file() or path.read_text(encoding="utf-8") != text)
    assert not stale, f"{stale} are stale: run `python -m torchpatch.frontends.docs_site`"


def test_every_setting_and_command_is_documented() -> None:
    settings_page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    cli_page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for setting in SETTINGS:
        assert f"## `{setting.name}`" in settings_page
    for option in ("--fix", "--unsafe-fixes", "--output-format", "--min-torch", "--torch-version", "--gpu"):
        assert f"`{option}" in cli_page
    for command in ("check", "rule", "audit", "doctor", "changes", "skill", "skill build", "mcp", "server", "clean"):
        assert f"`torchpatch {command}`" in cli_page


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
@pytest.mark.parametrize("form", ["pyproject.toml", "torchpatch.toml"])
def test_each_settings_example_is_accepted(setting, form: str, tmp_path: Path, capsys) -> None:
    text = f"{setting.name} = {setting.example}\n"
    project = tmp_path / "project"
    project.mkdir()
    if setting.name == "extend":  # the file it names must exist; its keys arrive in this one
        (project / tomllib.loads(text)["extend"]).write_text('[tool.torchpatch]\nignore = ["TP302"]\n')
    (project / form).write_text(("[tool.torchpatch]\n" if form == "pyproject.toml" else "") + text)
    config = load_config(project / form)
    assert config.get("ignore") == ["TP302"] if setting.name == "extend" else setting.name in config
    (project / "clean.py").write_text("import torch\n")
    assert main(["check", "--no-cache", str(project)]) == 0, capsys.readouterr()
    assert f"{setting.name} = {setting.example}" in render_settings_reference()


def test_readme_fits_on_a_screen_and_links_to_the_docs() -> None:
    assert len(README.splitlines()) <= 200
    for page in ("getting-started.md", "configuration.md", "settings.md", "cli.md", "rules/README.md",
                 "integrations.md", "editors.md", "agents.md", "upgrading.md", "audit.md", "doctor.md", "faq.md",
                 "measurements/precision.md", "measurements/speed.md", "measurements/audit.md"):
        assert f"(docs/{page}" in README, page
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / target).is_file(), target


def test_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' torch==2.13.0 && python -m pytest -n auto --dist loadfile" in README
    assert "pip install -q -e '.[test]' 'torch==2.13.0'" in ci and "python -m pytest -n auto --dist loadfile" in ci


def _texts():
    yield "README.md", README
    for page in PAGES:
        yield str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")
    for source in (ROOT / "src" / "torchpatch").rglob("*.py"):
        yield str(source.relative_to(ROOT)), source.read_text(encoding="utf-8")
    for name in ("action.yml", ".pre-commit-hooks.yaml", "CONTRIBUTING.md"):
        yield name, (ROOT / name).read_text(encoding="utf-8")


def test_install_lines_name_the_repository() -> None:
    """torchpatch is not on the package index: every pip line installs it from the repository or a path."""
    wrong = []
    for name, text in _texts():
        for line in text.splitlines():
            for match in re.finditer(r"pip install[^\n`]*?(?<![\w./-])[\"']?torchpatch(\[[\w,]+\])?[\"']?(?=[\s`\"')]|$)", line):
                if GIT_INSTALL not in line[match.start():]:
                    wrong.append(f"{name}: {line.strip()}")
    assert not wrong, wrong


def test_no_release_tag_is_claimed() -> None:
    """No tag exists yet: pre-commit's rev and the Action's ref name a branch or a commit."""
    wrong = [f"{name}: {line.strip()}" for name, text in _texts() for line in text.splitlines()
             if re.search(r"rev:\s*v\d|torchpatch/torchpatch@v\d|torchpatch==\d", line)]
    assert not wrong, wrong
