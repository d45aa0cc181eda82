"""TP245: torch.meshgrid(...) without indexing= (warns since 1.10: the argument is to become required)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import add_keyword, has_double_star, keyword
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


class MeshgridWithoutIndexing(Rule):
    """
    ## What it does
    Flags calls to `torch.meshgrid` that do not pass `indexing=` (or pass `indexing=None`).

    ## Why is this bad?
    Without `indexing`, `torch.meshgrid` uses matrix (`"ij"`) indexing, while NumPy's `meshgrid`
    defaults to Cartesian (`"xy"`) indexing. PyTorch 1.10 added the argument and announced that it will
    become required: every release 2.4 … 2.15 warns `UserWarning: torch.meshgrid: in an upcoming release,
    it will be required to pass the indexing argument.` (from `aten/src/ATen/native/TensorShape.cpp`; the
    Python wrapper in torch/functional.py passes nothing when `indexing` is None, checked on 2.4.1, 2.13.0
    and 2.15.0).

    ## Example
    ```python
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w))
    ```
    Use instead:
    ```python
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    ```

    ## Fix safety
    The fix adds `indexing="ij"`, what torch uses when the argument is left out in every release
    2.4 … 2.15 (the keyword exists since 1.10), so it keeps behaviour. It is marked safe.
    """

    code = "TP245"
    name = "meshgrid-without-indexing"
    summary = "`torch.meshgrid` without `indexing=` (warns since 1.10; the argument is to become required)"
    deprecated_in = v("1.10")
    replacement_since = v("1.10")
    fix_safety = SAFE
    fix_safety_note = ('`indexing="ij"` is what torch uses when the argument is left out, in every release 2.4 … 2.15 '
                       "(the keyword exists since 1.10).")
    torch_message = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.meshgrid.html",)
    calls = frozenset({"torch.meshgrid", "torch.functional.meshgrid"})

    VALID = [
        Valid("import torch\nys, xs = torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij')\n",
              torch_runs_clean=True),
        Valid("import torch\ngrid = torch.meshgrid([torch.arange(2), torch.arange(3)], indexing='xy')\n",
              torch_runs_clean=True),
        "import torch\nopts = {'indexing': 'ij'}\ngrid = torch.meshgrid(a, b, **opts)\n",
        # NumPy's meshgrid has its own default and no warning.
        "import numpy as np\nimport torch\nxx, yy = np.meshgrid(xs, ys)\n",
    ]
    INVALID = [
        Invalid("import torch\nys, xs = torch.meshgrid(torch.arange(2), torch.arange(3))\n",
                fixed="import torch\nys, xs = torch.meshgrid(torch.arange(2), torch.arange(3), indexing=\"ij\")\n",
                torch_warns=r"it will be required to pass the indexing argument"),
        Invalid("from torch import meshgrid\ngrid = meshgrid([a, b], indexing=None)\n",
                fixed="from torch import meshgrid\ngrid = meshgrid([a, b], indexing=\"ij\")\n"),
        Invalid("import torch\ngx, gy = torch.meshgrid(\n    torch.arange(w),\n    torch.arange(h),\n)\n",
                fixed="import torch\ngx, gy = torch.meshgrid(\n    torch.arange(w),\n    torch.arange(h),\n    indexing=\"ij\",\n)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if has_double_star(call):
            return
        indexing = keyword(call, "indexing")
        if indexing is not None and not (isinstance(indexing.value, ast.Constant) and indexing.value.value is None):
            return
        message = ("`torch.meshgrid` without `indexing=` warns in PyTorch 2.4 through 2.15 (since 1.10): torch warns: "
                   "in an upcoming release, it will be required to pass the indexing argument; pass "
                   "`indexing=\"ij\"` (today's default) or `\"xy\"` (NumPy's)")
        yield ctx.diagnostic(call.func, message, self._fix(ctx, call, indexing))

    @staticmethod
    def _fix(ctx, call, indexing):
        if indexing is not None:
            edit = Edit(ctx.start(indexing.value), ctx.end(indexing.value), '"ij"')
        else:
            edit = add_keyword(ctx, call, 'indexing="ij"')
        return Fix('Pass `indexing="ij"` (the indexing torch uses when it is left out)', [edit], SAFE)
