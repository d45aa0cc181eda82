"""TP201: deprecated PyTorch names and modules that still work (rows of the API table)."""

from __future__ import annotations

from torchpatch.rules._table_rule import TableRule, examples_of
from torchpatch.rules.api_table import rows_where
from torchpatch.rules.base import SAFE


class DeprecatedApi(TableRule):
    """
    ## What it does
    Flags uses and imports of deprecated PyTorch functions, classes and modules that still exist, as
    listed in the API table (`src/torchpatch/rules/data/api_changes.toml`). Assigning to the name
    (`torch.distributed.reduce_scatter_tensor = wrapper`, a patch) or deleting it is not a use and is
    not reported. Importing from `torch.nn.utils.weight_norm` (the submodule that shares the deprecated
    function's name) is reported only for names that carry the deprecation: `remove_weight_norm` never
    does, and `WeightNorm` only through its static `apply` (its constructor and `compute_weight` do not
    warn in 2.4-2.15), so an import whose uses cannot reach `apply` is not reported.

    ## Why is this bad?
    Deprecated names warn at run time and are removed in a later release; their replacements are
    the supported path. Where the replacement is a plain rename or move, the fix applies it.
    """

    code = "TP201"
    name = "deprecated-api"
    summary = "A deprecated PyTorch API (with its replacement)"
    rows = rows_where(removed=False)
    deprecated_in = min(row.deprecated_in for row in rows.values())
    fix_safety = SAFE
    fix_safety_note = "Safe when the replacement exists at your minimum torch and behaves the same; unsafe otherwise."
    references_to = frozenset(rows)
    torchfix_codes = ("TOR101", "TOR103")  # deprecated functions and imports (functorch, torch.ger, ...)
    catalog_ids = tuple(sorted({row.catalog for row in rows.values()}))
    INVALID = examples_of(rows)
