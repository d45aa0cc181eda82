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
