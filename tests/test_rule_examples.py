"""Every rule's own examples: valid code is clean for all rules, invalid code is flagged, fixes are exact."""

from __future__ import annotations

import re

import pytest

from torchpatch.rules import all_rules
from torchpatch.rules.base import Invalid, Valid, example_code, example_filename

ALL_CODES = None  # every rule, opt-in ones included
#: A release number, as messages write it ("PyTorch 2.6", "removed in 2.11", "since 1.7"): not just any digit.
_VERSION = re.compile(r"\b[0-2]\.\d{1,2}\b")


def _cases(kind: str):
    for rule in all_rules():
        for number, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.code}-{rule.name}-{kind.lower()}{number}")


def _options(rule, example):
    options = {"select": ["ALL"]}
    if isinstance(example, (Valid, Invalid)):
        if example.min_torch:
            options["min_torch"] = example.min_torch
        if example.target_torch:
            options["target"] = example.target_torch
    return options


@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
def test_valid_example_is_clean(lint, rule, example):
    result = lint(example_code(example), name=example_filename(example), **_options(rule, example))
    assert result.error is None
    assert [(f.code, f.row, f.message) for f in result.findings] == []


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_is_flagged(lint, rule, example):
    result = lint(example_code(example), name=example_filename(example), **_options(rule, example))
    assert result.error is None
    codes = [f.code for f in result.findings]
    assert rule.code in codes, f"{rule.code} not reported; got {codes}"
    for finding in result.findings:
        if finding.code == rule.code:
            assert _VERSION.search(finding.message), f"the message must name the PyTorch version: {finding.message}"


@pytest.mark.parametrize("rule, example", [p for p in _cases("INVALID") if isinstance(p.values[1], Invalid) and p.values[1].fixed])
def test_fix_is_exact_and_converges(lint, rule, example):
    options = _options(rule, example)
    result = lint(example_code(example), name=example_filename(example), fix=True, unsafe_fixes=True, **options)
    expected = example_code(example.fixed)
    assert result.fixed_text == expected
    assert rule.code not in [f.code for f in result.findings]
    again = lint(expected, name=example_filename(example), fix=True, unsafe_fixes=True, **options)
    assert again.fixed_count == 0
    assert again.fixed_text == expected
