"""Torch is the oracle: every rule example marked runnable is run under real torch.

An ``Invalid(..., torch_warns=REGEX)`` example must make torch warn (or raise) with a message matching REGEX;
a ``Valid(..., torch_runs_clean=True)`` example must run without error and without any deprecation or
behaviour-change warning. The examples run in one subprocess (scripts/torch_oracle.py), on CPU.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.rules import all_rules
from torchpatch.rules.base import Invalid, Valid, example_code

pytestmark = pytest.mark.torch

RUNNER = Path(__file__).resolve().parents[1] / "scripts" / "torch_oracle.py"
#: What counts as torch saying a form is deprecated or will change (a UserWarning must say so in words).
_DEPRECATION_CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}
_CHANGE_WORDS = re.compile(r"deprecat|will be removed|will change|no longer|will raise|in a future", re.I)


def _examples():
    for rule in all_rules():
        for number, example in enumerate(rule.INVALID):
            if isinstance(example, Invalid) and example.torch_warns:
                yield f"{rule.code}-invalid{number}", example
        for number, example in enumerate(rule.VALID):
            if isinstance(example, Valid) and example.torch_runs_clean:
                yield f"{rule.code}-valid{number}", example


EXAMPLES = dict(_examples())


def is_change_warning(warning: dict) -> bool:
    return warning["category"] in _DEPRECATION_CATEGORIES or bool(_CHANGE_WORDS.search(warning["message"]))


@pytest.fixture(scope="module")
def oracle():
    pytest.importorskip("torch")
    snippets = [{"id": key, "code": example_code(example)} for key, example in EXAMPLES.items()]
    done = subprocess.run([sys.executable, str(RUNNER)], input=json.dumps(snippets), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("key", [k for k, e in EXAMPLES.items() if isinstance(e, Invalid)])
def test_torch_warns_on_invalid_example(oracle, key):
    example, result = EXAMPLES[key], oracle[key]
    said = [w["message"] for w in result["warnings"]]
    if result["error"]:
        said.append(result["error"]["message"])
    assert any(re.search(example.torch_warns, message) for message in said), (
        f"torch did not say /{example.torch_warns}/; it said {said}")


@pytest.mark.parametrize("key", [k for k, e in EXAMPLES.items() if isinstance(e, Valid)])
def test_torch_is_quiet_on_valid_example(oracle, key):
    result = oracle[key]
    assert result["error"] is None, result["error"]
    assert [w for w in result["warnings"] if is_change_warning(w)] == []


def test_the_oracle_sees_a_warning_torch_gives_once():
    pytest.importorskip("torch")
    code = "import torch\nx = torch.ones(2)\nx.storage()\nx.storage()\n"
    snippets = [{"id": "a", "code": code}, {"id": "b", "code": code}]
    done = subprocess.run([sys.executable, str(RUNNER)], input=json.dumps(snippets), capture_output=True,
                          text=True, timeout=300)
    results = json.loads(done.stdout)
    for key in ("a", "b"):
        assert any("TypedStorage is deprecated" in w["message"] for w in results[key]["warnings"])


# -- the recorded run under torch 2.15 (scripts/record_torch_oracle.py) --------------------------------------
RECORD_215 = Path(__file__).resolve().parent / "data" / "torch_oracle" / "2.15.json"


def _record_215() -> dict:
    return json.loads(RECORD_215.read_text(encoding="utf-8"))["examples"]


def _applies_at_215(example) -> bool:
    return example.target_torch is None or example.target_torch.startswith("2.15")


@pytest.mark.parametrize("key", list(EXAMPLES))
def test_the_215_record_is_not_stale(key):
    record = _record_215()
    assert key in record, "tests/data/torch_oracle/2.15.json lacks this example: run scripts/record_torch_oracle.py"
    assert record[key]["code"] == example_code(EXAMPLES[key]), "the example changed since 2.15 was recorded"


@pytest.mark.parametrize("key", [k for k, e in EXAMPLES.items() if isinstance(e, Invalid) and _applies_at_215(e)])
def test_torch_215_warns_on_invalid_example(key):
    example, result = EXAMPLES[key], _record_215()[key]
    said = [w["message"] for w in result["warnings"]] + ([result["error"]["message"]] if result["error"] else [])
    assert any(re.search(example.torch_warns, message) for message in said), (
        f"torch 2.15 did not say /{example.torch_warns}/; it said {said}")


@pytest.mark.parametrize("key", [k for k, e in EXAMPLES.items() if isinstance(e, Valid) and _applies_at_215(e)])
def test_torch_215_is_quiet_on_valid_example(key):
    result = _record_215()[key]
    assert result["error"] is None, result["error"]
    assert [w for w in result["warnings"] if is_change_warning(w)] == []
