"""TP001 and TP100, the codes the engine reports itself: a docs page, `torchpatch rule`, a URL in every format."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from torchpatch.docs import render_all
from torchpatch.engine.codes import ENGINE_CODES, FILE_NOT_CHECKED, UNUSED_NOQA, engine_code
from torchpatch.frontends.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


@pytest.fixture
def torchpatch_cli(capsys, monkeypatch):
    """The CLI in process (a subprocess per call cost about 2 s each): returncode, stdout, stderr."""

    def run(*args: str, cwd: Path | None = None) -> SimpleNamespace:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


@pytest.mark.parametrize("key", ["TP100", "tp100", "unused-noqa", "TP001", "file-not-checked"])
def test_rule_command_explains_engine_codes(key: str, torchpatch_cli) -> None:
    result = torchpatch_cli("rule", key)
    assert result.returncode == 0, result.stderr
    engine = engine_code(key)
    assert engine is not None
    assert result.stdout.startswith(f"# {engine.name} ({engine.code})\n")
    assert "## Fix safety" in result.stdout


def test_rule_all_lists_engine_codes_in_text_and_json(torchpatch_cli) -> None:
    text = torchpatch_cli("rule", "--all")
    assert text.returncode == 0
    codes = [line.split()[0] for line in text.stdout.splitlines()]
    assert {"TP001", "TP100"} <= set(codes) and len(codes) == len(set(codes))
    # The JSON of --all is the knowledge export: the database's rules only, each with every field.
    entries = json.loads(torchpatch_cli("rule", "--all", "--output-format", "json").stdout)
    assert not {"TP001", "TP100"} & {entry["code"] for entry in entries}
    [entry] = json.loads(torchpatch_cli("rule", "TP100", "--output-format", "json").stdout)
    assert entry["url"].endswith("/docs/rules/unused-noqa.md") and entry["explanation"] == UNUSED_NOQA.page()


def test_unknown_rule_is_still_a_usage_error(torchpatch_cli) -> None:
    result = torchpatch_cli("rule", "TP999")
    assert result.returncode == 2 and "unknown rule 'TP999'" in result.stderr


def test_engine_pages_are_generated_and_committed() -> None:
    pages = render_all(DOCS)
    for engine in ENGINE_CODES.values():
        page = DOCS / f"{engine.name}.md"
        assert pages[page] == engine.page()
        assert page.read_text(encoding="utf-8") == engine.page()
        assert f"[{engine.name}]({engine.name}.md)" in pages[DOCS / "README.md"]


def test_unused_noqa_example_is_reported_and_fixed(tmp_path: Path, torchpatch_cli) -> None:
    """The page's example is what TP100 reports (when selected), and --fix removes the directive."""
    path = tmp_path / "example.py"
    path.write_text(UNUSED_NOQA.example + "\n", encoding="utf-8")
    assert torchpatch_cli("check", "--isolated", str(path), cwd=tmp_path).returncode == 0  # off by default
    full = torchpatch_cli("check", "--isolated", "--extend-select", "TP100", str(path), cwd=tmp_path)
    assert full.returncode == 1
    assert f"= docs: {UNUSED_NOQA.url()}" in full.stdout
    fixed = torchpatch_cli("check", "--isolated", "--extend-select", "TP100", "--fix", str(path), cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert path.read_text(encoding="utf-8") == UNUSED_NOQA.example.replace("  # noqa: TP301", "") + "\n"


def test_file_not_checked_example_is_reported_with_its_url(tmp_path: Path, torchpatch_cli) -> None:
    path = tmp_path / "broken.py"
    path.write_text(FILE_NOT_CHECKED.example + "\n", encoding="utf-8")
    result = torchpatch_cli("check", "--isolated", "--output-format", "json", str(path), cwd=tmp_path)
    assert result.returncode == 1
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "TP001" and finding["url"] == FILE_NOT_CHECKED.url()
