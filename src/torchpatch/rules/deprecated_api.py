"""TP201: deprecated PyTorch names and modules that still work (rows of the API table)."""

from __future__ import annotations

from torchpatch.rules._table_rule import TableRule, examples_of
from torchpatch.rules.api_table import rows_where
from torchpatch.rules.base import SAFE, Invalid


class DeprecatedApi(TableRule):
    """
    ## What it does
    Flags uses and imports of deprecated PyTorch functions, classes and modules that still exist, as
    listed in the API table (`src/torchpatch/rules/data/api_changes.toml`). Assigning to the name
    (`torch.distributed.reduce_scatter_tensor = wrapper`, a patch) or deleting it is not a use and is
    not reported. A name imported with `from ... import old` is reported (and fixed) at the import, and
    each call of it is reported again without a fix, since torch warns on the call's line. Importing from `torch.nn.utils.weight_norm` (the submodule that shares the deprecated
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
    INVALID = [
        *examples_of(rows),
        # From-imports: the fix is the import's; each call is also reported, where torch 2.4-2.15 warns.
        Invalid("import torch\nfrom torch.nn.utils import clip_grad_norm\nmodel = torch.nn.Linear(4, 4)\n"
                "norm = clip_grad_norm(model.parameters(), 1.0)\n",
                fixed="import torch\nfrom torch.nn.utils import clip_grad_norm_ as clip_grad_norm\n"
                      "model = torch.nn.Linear(4, 4)\nnorm = clip_grad_norm(model.parameters(), 1.0)\n",
                torch_warns=r"`torch\.nn\.utils\.clip_grad_norm` is now deprecated in favor of"),
        Invalid("import torch\nfrom torch.nn.utils import weight_norm\nlayer = weight_norm(torch.nn.Linear(4, 4))\n",
                fixed="import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n"
                      "layer = weight_norm(torch.nn.Linear(4, 4))\n",
                torch_warns=r"`torch\.nn\.utils\.weight_norm` is deprecated in favor of"),
        Invalid("import torch\nfrom torch.testing import assert_allclose\nassert_allclose(torch.ones(2), torch.ones(2))\n",
                fixed="import torch\nfrom torch.testing import assert_close as assert_allclose\n"
                      "assert_allclose(torch.ones(2), torch.ones(2))\n",
                torch_warns=r"`torch\.testing\.assert_allclose\(\)` is deprecated since 1\.12"),
        # A C++ warning (aten LinearAlgebra.cpp), printed on CPU by 2.4.1, 2.13 and 2.15.
        Invalid("import torch\nweight = torch.randn(4, 4)\npenalty = torch.nuclear_norm(weight)\n",
                torch_warns=r"at::nuclear_norm is deprecated"),
    ]
