"""TP258 against real torch: the scalar-first overloads warn once per process (libtorch_python's
``PythonArgParser::check_deprecated`` uses ``TORCH_WARN_ONCE``), so a run shows the first one only; torchpatch
reports each, and its message says so."""

from __future__ import annotations

import subprocess
import sys

import pytest

from precision_helpers import findings_of

pytestmark = pytest.mark.torch

_CALLS = "x.sub(2, y)\nx.add(2, y)\nx.addcmul(2, a, a)\nx.addmm(0.5, a, a)\n"
_SETUP = "import torch\nx = torch.ones(2, 2)\ny = torch.ones(2, 2)\na = torch.ones(2, 2)\n"


def test_torch_warns_once_for_all_the_deprecated_overloads_of_a_process():
    pytest.importorskip("torch")
    code = ("import warnings\nwarnings.simplefilter('always')\n" + _SETUP
            + "with warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
            + "".join(f"    {line}\n" for line in _CALLS.splitlines())
            + "print(sum('This overload of' in str(w.message) for w in caught))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split()[-1] == "1"


@pytest.mark.parametrize("call", _CALLS.splitlines())
def test_each_deprecated_overload_warns_in_a_fresh_process_and_is_reported(lint, call):
    pytest.importorskip("torch")
    code = ("import warnings\n" + _SETUP + "with warnings.catch_warnings(record=True) as caught:\n"
            f"    warnings.simplefilter('always')\n    {call}\nprint(any('This overload of' in str(w.message) for w in caught))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split()[-1] == "True"
    [finding] = findings_of(lint, _SETUP + call + "\n", "TP258")
    assert "once per process" in finding.message
