"""The rule database is complete and consistent, and docs/rules/ is what the rules render to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchpatch.docs import render_all
from torchpatch.rules import all_rules
from torchpatch.rules.base import SAFE, UNSAFE, Invalid

ROOT = Path(__file__).resolve().parents[1]
RULES = all_rules()


def test_codes_and_names_are_unique_and_well_formed():
    codes = [rule.code for rule in RULES]
    names = [rule.name for rule in RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for rule in RULES:
        assert re.fullmatch(r"TP[1-9]\d\d", rule.code), rule.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
        module_file = Path(__import__(rule.__module__, fromlist=["_"]).__file__).stem
        assert module_file == rule.name.replace("-", "_"), f"{rule.code} lives in {module_file}.py"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_complete(rule):
    assert rule.deprecated_in or rule.removed_in or rule.changed_in, "every rule has a version"
    assert rule.summary and not rule.summary.endswith(".")
    assert "## What it does" in rule.prose() and "## Why is this bad?" in rule.prose()
    assert rule.INVALID, "every rule has an invalid example"
    assert rule.fix_safety in (None, SAFE, UNSAFE)
    if rule.fix_safety is not None:
        assert any(isinstance(e, Invalid) and e.fixed for e in rule.INVALID), "a fixable rule shows its fix"
    assert rule.catalog_ids or rule.references


def test_torchfix_codes_do_not_collide_with_ours():
    for rule in RULES:
        for code in rule.torchfix_codes:
            assert code.startswith("TOR")


def test_committed_docs_are_fresh():
    folder = ROOT / "docs" / "rules"
    expected = render_all(folder)
    committed = {path: path.read_text(encoding="utf-8") for path in folder.glob("*.md")}
    stale = sorted(str(p.name) for p in set(expected) | set(committed) if expected.get(p) != committed.get(p))
    assert not stale, f"docs/rules is stale for {stale}: run `python -m torchpatch.docs`"
