"""Every row of the API table checked against real torch (CI installs 2.13.0 CPU).

A row removed at or before the installed release: the old name is gone. A row not removed yet: the
old name still exists. A row with a replacement that exists at the installed release: the new name
exists; one whose replacement comes later: the new name does not exist yet (so `replacement_since`
is not too late).
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings

import pytest

from torchpatch.rules.api_table import ApiChange, api_changes
from torchpatch.versions import Version

pytestmark = pytest.mark.torch

ROWS = api_changes()


def _installed() -> Version:
    torch = pytest.importorskip("torch")
    return Version.parse(torch.__version__)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ModuleNotFoundError, ValueError):
        return False


def exists(qualname: str, kind: str = "name") -> bool:
    """Whether ``qualname`` can be imported (a module) or reached by getattr from its longest module."""
    if kind == "module":
        return _module_exists(qualname)
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        if not _module_exists(module_name):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = importlib.import_module(module_name)
            try:
                for attribute in parts[cut:]:
                    value = getattr(value, attribute)
            except AttributeError:
                return False
        return True
    return False


def _needs_package(name: str) -> None:
    root = name.split(".")[0]
    if root != "torch" and importlib.util.find_spec(root) is None:
        pytest.skip(f"{root} is not installed (not in CI's install list): cannot check `{name}`")


def _row_id(row: ApiChange) -> str:
    return row.old


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_old_name_matches_removed_in(row):
    installed = _installed()
    present = exists(row.old, row.kind)
    if not present and row.deprecated_in is not None and row.deprecated_in > installed:
        pytest.skip(f"{row.old} is deprecated in {row.deprecated_in}, after torch {installed}: it may be newer too")
    if row.removed_in is not None and row.removed_in <= installed:
        assert not present, f"{row.old} still exists in torch {installed} but the table says removed in {row.removed_in}"
    else:
        assert present, f"{row.old} is missing from torch {installed} but the table says it still exists"


@pytest.mark.parametrize("row", [r for r in ROWS if r.new], ids=_row_id)
def test_new_name_matches_replacement_since(row):
    installed = _installed()
    _needs_package(row.new)
    new_kind = row.kind if row.kind == "module" else "name"
    present = exists(row.new, new_kind)
    if row.replacement_since is None or row.replacement_since <= installed:
        assert present, f"the replacement {row.new} is missing from torch {installed}"
    else:
        assert not present, f"{row.new} already exists in torch {installed}; replacement_since {row.replacement_since} is too late"


@pytest.mark.parametrize("row", [r for r in ROWS if r.fix == "safe"], ids=_row_id)
def test_safe_rows_have_a_replacement_and_its_release(row):
    assert row.new and row.replacement_since is not None


def test_rows_are_unique_and_versions_are_ordered():
    olds = [row.old for row in ROWS]
    assert len(olds) == len(set(olds))
    for row in ROWS:
        assert row.deprecated_in or row.removed_in, row.old
        if row.deprecated_in and row.removed_in:
            assert row.deprecated_in <= row.removed_in, row.old
        assert row.fix in ("safe", "unsafe", "none"), row.old
        assert row.kind in ("name", "module"), row.old


def test_deprecated_renames_warn_and_the_replacement_is_what_they_call():
    """The deprecated names this table fixes safely really warn in 2.13, and the new names run."""
    torch = pytest.importorskip("torch")
    import torch._dynamo.external_utils
    import torch.utils._pytree as pytree

    calls = {
        "torch._utils.is_compiling": lambda: torch._utils.is_compiling(),
        "torch._dynamo.config.shallow_copy_dict": lambda: torch._dynamo.config.shallow_copy_dict(),
        "torch.accelerator.current_device_idx": lambda: torch.accelerator.current_device_idx(),
        "torch.utils._pytree._is_leaf": lambda: pytree._is_leaf(1),
        "torch.nn.utils.stateless.functional_call": lambda: torch.nn.utils.stateless.functional_call(
            torch.nn.Linear(2, 2), {}, (torch.ones(1, 2),)),
        "torch.nn.utils.clip_grad_norm": lambda: torch.nn.utils.clip_grad_norm([torch.ones(2, requires_grad=True)], 1.0),
        "torch.cuda.memory_cached": lambda: torch.cuda.memory_cached(),
        "torch.cuda.max_memory_cached": lambda: torch.cuda.max_memory_cached(),
    }
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
            except RuntimeError:
                pass  # no accelerator on a CPU build: the warning comes first
        assert any(issubclass(w.category, (DeprecationWarning, FutureWarning)) or "deprecat" in str(w.message).lower()
                   for w in caught), f"{name} does not warn in {torch.__version__}"
    assert torch.compiler.is_compiling() is False
    # external_utils.is_compiling is deprecated only under TYPE_CHECKING (no runtime warning); it forwards.
    assert torch._dynamo.external_utils.is_compiling() is torch.compiler.is_compiling()
    assert pytree.tree_is_leaf(1) is True
    grad = [torch.ones(2, requires_grad=True)]
    grad[0].grad = torch.full((2,), 3.0)
    old_norm = torch.nn.utils.clip_grad_norm(grad, 1.0)
    grad[0].grad = torch.full((2,), 3.0)
    assert torch.equal(old_norm, torch.nn.utils.clip_grad_norm_(grad, 1.0))
    assert isinstance(torch._dynamo.config.get_config_copy(), dict)
    out = torch.func.functional_call(torch.nn.Linear(2, 2), {}, (torch.ones(1, 2),))
    assert out.shape == (1, 2)


MOVES = [(row, move) for row in ROWS for move in row.module_moves]


@pytest.mark.parametrize("row, move", MOVES, ids=[move.old for _, move in MOVES])
def test_module_moves_name_real_modules_and_the_same_objects(row, move):
    """Each listed move is a real module at 2.13 (or in the pinned torchao) holding every listed name;
    where the old module still exists, each name is the very object it had there."""
    installed = _installed()
    _needs_package(move.new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = importlib.import_module(move.new)
        for name in move.names or ():
            assert hasattr(new, name), f"{move.new}.{name}"
            assert not isinstance(getattr(new, name), type(importlib)), f"{move.new}.{name} is a module"
        if row.removed_in is None or row.removed_in > installed:
            old = importlib.import_module(move.old)
            for name in move.names or ():
                assert getattr(old, name) is getattr(new, name), f"{move.old}.{name}"


def test_module_move_targets_are_modules_not_functions():
    """``torch.distributed.fsdp.fully_shard`` is a function: no move may point at it as a module."""
    pytest.importorskip("torch")
    for row in ROWS:
        for move in row.module_moves:
            _needs_package(move.new)
            assert _module_exists(move.new), move.new


@pytest.mark.parametrize("old", ["torch.distributed.fsdp.FullyShardedDataParallel.state_dict_type",
                                 "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.state_dict_type"])
def test_fsdp_state_dict_type_advice_fits_every_state_dict_type(old):
    """`full_state_dict=True` is the counterpart of FULL_STATE_DICT only: the DCP helpers' default options give the
    sharded form (SHARDED_STATE_DICT, read in 2.4.1's and 2.15.0's checkpoint/state_dict.py), and
    LOCAL_STATE_DICT has none. The advice said `full_state_dict=True` whatever the call switched to."""
    [row] = [r for r in api_changes() if r.old == old]
    assert "FULL_STATE_DICT" in row.note and "SHARDED_STATE_DICT" in row.note and "LOCAL_STATE_DICT" in row.note


def test_issue_23_names_warn_on_2_13_and_their_replacements_are_what_they_call():
    """The rows added for issue #23 name calls torch 2.13 warns on, and the safe ones forward to the new name."""
    torch = pytest.importorskip("torch")
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    weight = torch.empty(3, 3)
    calls = {
        "torch.nn.init.normal": (lambda: torch.nn.init.normal(weight), "nn.init.normal_"),
        "torch.nn.init.kaiming_uniform": (lambda: torch.nn.init.kaiming_uniform(weight), "nn.init.kaiming_uniform_"),
        "torch.cuda.reset_max_memory_allocated": (torch.cuda.reset_max_memory_allocated, "resets /all/ peak"),
        "torch.cuda.reset_max_memory_cached": (torch.cuda.reset_max_memory_cached, "resets /all/ peak"),
        "torch.distributed.reduce_op": (lambda: dist.reduce_op.SUM, "use `torch.distributed.ReduceOp`"),
        "torch.distributed._all_gather_base": (lambda: dist._all_gather_base(weight, weight), "private function"),
        "torch.distributed._reduce_scatter_base": (lambda: dist._reduce_scatter_base(weight, weight), "private function"),
        "torch.distributed.distributed_c10d._get_global_rank": (
            lambda: distributed_c10d._get_global_rank(None, 0), "get_global_rank"),
    }
    for name, (call, text) in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
            except (RuntimeError, AttributeError, ValueError, TypeError):
                pass  # no accelerator or process group here: the deprecation warning comes first
        assert any(text in str(w.message) for w in caught), f"{name} does not warn in {torch.__version__}"
    assert dist.reduce_op.SUM is dist.ReduceOp.SUM
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    old = torch.nn.init.normal(torch.empty(4))
    torch.manual_seed(0)
    assert torch.equal(old, torch.nn.init.normal_(torch.empty(4)))
    torch.random.set_rng_state(generator_state)
    import typing

    import torch.jit.annotations as annotations
    assert annotations.Optional is typing.Optional and annotations.List is typing.List
