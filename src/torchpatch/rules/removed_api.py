"""TP101: names and modules PyTorch removed (rows of the API table)."""

from __future__ import annotations

from torchpatch.rules._table_rule import TableRule, examples_of
from torchpatch.rules.api_table import rows_where
from torchpatch.rules.base import SAFE


class RemovedApi(TableRule):
    """
    ## What it does
    Flags uses and imports of PyTorch functions, classes and modules that a release removed, as listed
    in the API table (`src/torchpatch/rules/data/api_changes.toml`, one row per name with its versions
    and the wheels that show it). Assigning to the name (a polyfill, `torch.onnx.enable_log = ...`) or
    deleting it is not a use and is not reported.

    ## Why is this bad?
    The code fails with `AttributeError`, `ImportError` or `ModuleNotFoundError` on the release that
    removed the name. Where the table names a replacement, the fix switches to it; where the
    replacement needs a newer release than your minimum, the fix is marked unsafe.

    A removed name used alone in a `try` whose handler catches the error its removal raises
    (`try: torch.onnx.enable_log()` / `except AttributeError: pass`) breaks nothing and is not
    reported, unless a release deprecated it first (then it still warns there).
    """

    code = "TP101"
    name = "removed-api"
    summary = "A PyTorch API that was removed (with its replacement)"
    rows = rows_where(removed=True)
    removed_in = min(row.removed_in for row in rows.values())
    fix_safety = SAFE
    fix_safety_note = "Safe when the replacement exists at your minimum torch and behaves the same; unsafe otherwise."
    references_to = frozenset(rows)
    catalog_ids = tuple(sorted({row.catalog for row in rows.values()}))
    INVALID = examples_of(rows)
