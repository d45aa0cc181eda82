"""TorchFix parity on real fixtures: TorchFix's own checker fixtures, and TorchFix run on our examples.

TorchFix's fixtures live in its repository (tests/fixtures, not in the wheel): set TORCHFIX_FIXTURES to a
checkout's fixtures folder (default /work/realcode/torchfix/tests/fixtures); without it these tests skip.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import torchfix_fixtures  # noqa: E402

from torchpatch.engine.settings import torchfix_redirects  # noqa: E402
from torchpatch.rules import all_rules  # noqa: E402
from torchpatch.rules.base import example_code, example_filename  # noqa: E402

FIXTURES = torchfix_fixtures.DEFAULT_FIXTURES
needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="TorchFix's fixtures are not checked out here")


@needs_fixtures
def test_every_torchfix_fixture_finding_is_reported_or_explained():
    reported, missed = torchfix_fixtures.compare(FIXTURES)
    unexplained = [(path.stem, row, code) for path, row, code in missed
                   if (path.stem, row, code) not in torchfix_fixtures.MISS_REASONS]
    assert unexplained == []
    assert len(reported) >= 69
    assert len(reported) + len(missed) == len(torchfix_fixtures.expected_findings(FIXTURES))


def _torchfix_findings(text: str) -> list[tuple[int, str]]:
    from torchfix.torchfix import TorchChecker

    checker = TorchChecker(None, text.splitlines(keepends=True))
    try:
        return [(row, message.split(" ", 1)[0]) for row, _, message, _ in checker.run()]
    except Exception as error:  # TorchFix 0.7.0 crashes on some inputs ("Expected a Attribute but got a Name!")
        if "Expected a" not in str(error):
            raise
        return []


needs_torchfix = pytest.mark.skipif(importlib.util.find_spec("torchfix") is None, reason="torchfix is not installed")


@needs_fixtures
@needs_torchfix
def test_what_torchfix_itself_finds_in_its_fixtures_we_report_or_explain(lint):
    """TorchFix run on its own fixtures (the installed release, which may predate some .txt files)."""
    redirects = torchfix_redirects()
    compared = 0
    unexplained = []
    for source in sorted(FIXTURES.glob("**/checker/*.py")):
        theirs = _torchfix_findings(source.read_text())
        if not theirs:
            continue
        ours = {(f.row, f.code) for f in lint(source.read_text(), select=sorted({c for _, c in theirs}),
                                              target="2.15").findings}
        for row, code in theirs:
            compared += 1
            if not any((row, our) in ours for our in redirects.get(code, ())) \
                    and (source.stem, row, code) not in torchfix_fixtures.MISS_REASONS:
                unexplained.append((source.stem, row, code))
    assert compared > 50
    assert unexplained == []


@needs_torchfix
def test_what_torchfix_finds_in_our_examples_we_find_too(lint):
    redirects = torchfix_redirects()
    checked = 0
    for rule in all_rules():
        if not rule.torchfix_codes:
            continue
        for example in rule.INVALID:
            if example_filename(example) != "snippet.py":
                continue
            text = example_code(example)
            if "\\" in text:
                continue  # libcst (TorchFix's parser) rejects some line continuations our examples use
            theirs = {(row, code) for row, code in _torchfix_findings(text) if code in rule.torchfix_codes}
            if not theirs:
                continue
            ours = {(f.row, f.code) for f in lint(text, select=list(rule.torchfix_codes),
                                                  target=getattr(example, "target_torch", None) or "2.15").findings}
            # Same code family in the same file: we report `from m import old` at the import where TorchFix
            # reports each use, so rows may differ (see bench/torchfix_fixtures.py MISS_REASONS).
            for row, code in theirs:
                assert any(our in redirects[code] for _, our in ours), (rule.code, text, row, code)
                checked += 1
    assert checked >= 10
