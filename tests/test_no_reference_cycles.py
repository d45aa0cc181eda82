"""Checking a file makes no reference cycle that holds its syntax tree.

The check runs with the cyclic collector off (engine/parallel.py): a tree is freed by reference counting the
moment its file is done, and a collection runs only when the objects alive have grown a lot. A cycle that
holds part of a tree (a nested function that calls itself and keeps the tree's nodes in its closure, as
guards.module_definitions once did) would keep those nodes until the next collection: memory grows, and
the allocator hands out cold memory instead of what the last file freed.
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path

from torchpatch.engine.linter import check_file
from torchpatch.engine.settings import Settings

# Module-level version checks, try/except fallbacks, aliases and findings: every pass of the check runs.
CODE = '''\
import torch
from torch.cuda.amp import autocast

try:
    from torch.amp import GradScaler
except ImportError:
    GradScaler = None

if torch.__version__ >= "2.4":
    load = torch.load
else:
    load = None

fn = torch.cuda.amp.autocast


def train(model, path):
    with autocast():
        state = torch.load(path)
    model.load_state_dict(state)
    return torch.nn.functional.upsample(state["x"], scale_factor=2)
'''


def _garbage_of(check) -> list:
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        check()
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    return found


def test_checking_a_file_leaves_no_syntax_tree_in_cycles(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(CODE, encoding="utf-8")
    settings = Settings()
    check_file(path, settings)  # the first run builds the rule tables, which live on

    result = None

    def check() -> None:
        nonlocal result
        result = check_file(path, settings)

    garbage = _garbage_of(check)
    assert result is not None and {f.code for f in result.findings} >= {"TP202", "TP301", "TP253"}, result.findings
    nodes = [type(o).__name__ for o in garbage if isinstance(o, ast.AST)]
    assert nodes == [], f"syntax tree nodes left to the cyclic collector: {sorted(set(nodes))}"


def test_fixing_a_file_leaves_no_syntax_tree_in_cycles(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(CODE, encoding="utf-8")
    settings = Settings()
    check_file(path, settings, fix=True, unsafe_fixes=True)
    garbage = _garbage_of(lambda: check_file(path, settings, fix=True, unsafe_fixes=True))
    nodes = [type(o).__name__ for o in garbage if isinstance(o, ast.AST)]
    assert nodes == [], f"syntax tree nodes left to the cyclic collector: {sorted(set(nodes))}"
