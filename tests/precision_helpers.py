"""Shared by the tests of the hand-read precision samples (tests/test_precision_*.py, grouped by rule)."""

from __future__ import annotations


def findings_of(lint, source: str, code: str, **options):
    """The findings of one rule on ``source``; the file must parse."""
    result = lint(source, **options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.code == code]
