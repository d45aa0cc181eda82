"""The argument-level warnings read from the wheels (rules/data/warning_sites.json.gz) and what reads them."""

from __future__ import annotations

import ast
import gzip
import itertools
import json
from pathlib import Path

import pytest

from torchpatch.rules import _warning_sites
from torchpatch.rules.legacy_loss_reduction import legacy_reduction


def test_the_data_is_from_the_current_reader():
    script = Path(__file__).resolve().parents[1] / "scripts" / "build_warning_sites.py"
    reader = int(script.read_text().split("READER_VERSION = ", 1)[1].split()[0])
    data = json.loads(gzip.decompress(_warning_sites.DATA_PATH.read_bytes()))
    assert data["reader"] == reader, "run scripts/build_warning_sites.py"
    assert data["releases"][0] == "2.4" and data["releases"][-1] == "2.15"


@pytest.mark.parametrize("name, atoms", [
    ("torch.nn.functional.softmax", [["missing", "dim"]]),
    ("torch.nn.Softmax", [["missing", "dim"]]),
    ("torch.nn.functional.grid_sample", [["missing", "align_corners"]]),
    ("torch.autograd.grad", [["falsy", "only_inputs"]]),
    ("torch.nn.Module.state_dict", [["positional", "args"]]),
    ("torch.optim.lr_scheduler.StepLR.step", [["passed", "epoch"]]),
    ("torch.nn.MSELoss", [["passed", "size_average"]]),
])
def test_mined_conditions(name, atoms):
    assert atoms in [w["when"] for w in _warning_sites.callables()[name]["warnings"]]


@pytest.mark.parametrize("code, expected", [
    ("f(x)", True), ("f(x, 1)", False), ("f(x, dim=None)", True), ("f(x, dim=d)", False), ("f(*a)", None),
])
def test_evaluate_missing(code, expected):
    site = {"positional": ["input", "dim"], "keyword_only": [], "varargs": None, "defaults": {"dim": None}}
    call = ast.parse(code).body[0].value
    bound = _warning_sites.bind(call, site)
    result = None if bound is None else _warning_sites.evaluate([["missing", "dim"]], bound, site)
    assert result is expected


@pytest.mark.torch
def test_legacy_reduction_is_torchs():
    pytest.importorskip("torch")
    from torch.nn import _reduction

    for size_average, reduce in itertools.product([None, True, False], repeat=2):
        assert legacy_reduction(size_average, reduce) == _reduction.legacy_get_string(
            size_average, reduce, emit_warning=False)


def test_a_starred_argument_reaches_only_the_varargs():
    import ast

    from torchpatch.rules import _warning_sites

    meshgrid = _warning_sites.callables()["torch.meshgrid"]
    call = ast.parse("torch.meshgrid(*xs)").body[0].value
    bound = _warning_sites.bind(call, meshgrid)
    assert _warning_sites.evaluate(meshgrid["warnings"][0]["when"], bound, meshgrid) is True
    # Positional arguments into *args: an empty *a passes none, so it is not known.
    state_dict = _warning_sites.callables()["torch.nn.Module.state_dict"]
    call = ast.parse("model.state_dict(*a)").body[0].value
    bound = _warning_sites.bind(call, state_dict)
    assert _warning_sites.evaluate(state_dict["warnings"][0]["when"], bound, state_dict) is None
