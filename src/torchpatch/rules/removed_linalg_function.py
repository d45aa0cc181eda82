"""TP130: torch.solve / symeig / eig / lstsq / matrix_rank: deprecated in 1.9, now stubs that raise."""

from __future__ import annotations

import ast

from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

#: Old name -> how to rewrite it (the text of the RuntimeError each stub raises, shortened).
#: The stubs live in torch/_linalg_utils.py of the 1.13.1, 2.0.1 and 2.4.1 wheels and of torch 2.13.0.
REPLACEMENTS = {
    "torch.solve": "`torch.linalg.solve(A, B)`: arguments reversed, and it returns only the solution (no LU)",
    "torch.symeig": "`torch.linalg.eigvalsh(A, UPLO=...)` or `torch.linalg.eigh(A, UPLO=...)`: they read the lower "
                    "triangle by default where `symeig` read the upper one",
    "torch.eig": "`torch.linalg.eigvals(A)` or `torch.linalg.eig(A)`: they return complex tensors, not real pairs",
    "torch.lstsq": "`torch.linalg.lstsq(A, B).solution`: arguments reversed, no QR in the result",
    "torch.matrix_rank": "`torch.linalg.matrix_rank(A, hermitian=...)`: `symmetric` was renamed `hermitian`",
}

#: The release whose wheel first has the raising stub: the 1.13.1 wheel has stubs for solve, eig, lstsq
#: and matrix_rank and a real ``symeig`` (in torch/_C/_VariableFunctions.pyi); the 2.0.1 wheel stubs all five.
REMOVED_IN = {"torch.solve": "1.13", "torch.eig": "1.13", "torch.lstsq": "1.13", "torch.matrix_rank": "1.13",
              "torch.symeig": "2.0"}


class RemovedLinalgFunction(Rule):
    """
    ## What it does
    Flags `torch.solve`, `torch.symeig`, `torch.eig`, `torch.lstsq` and `torch.matrix_rank` (calls,
    references and imports) and names the `torch.linalg` function to use.

    ## Why is this bad?
    These functions were deprecated in PyTorch 1.9 in favour of `torch.linalg`, and removed in 1.13
    (`symeig` in 2.0): every release from 2.4 through 2.15 still has the names, but only as stubs that raise
    `RuntimeError: This function was deprecated since version 1.9 and is now removed` (see
    `torch/_linalg_utils.py`). Code that calls them cannot run on any release torchpatch supports.

    The `torch.linalg` replacements are not renames: `solve` and `lstsq` take their arguments in
    the opposite order and return less, `symeig` read the upper triangle where `eigh` reads the lower
    one, and `eig` returned real pairs where `linalg.eig` returns complex tensors. So there is no
    automatic fix; the message says what to write.
    """

    code = "TP130"
    name = "removed-linalg-function"
    summary = "`torch.solve`/`symeig`/`eig`/`lstsq`/`matrix_rank` (deprecated 1.9; stubs that raise in 2.4+)"
    deprecated_in = v("1.9")
    removed_in = v("1.13")
    references = (
        "https://docs.pytorch.org/docs/stable/linalg.html",
        "https://github.com/pytorch/pytorch/pull/70986",
        "https://github.com/pytorch/pytorch/pull/70988",
    )
    torchfix_codes = ("TOR001", "TOR004")
    references_to = frozenset(REPLACEMENTS)

    VALID = [
        "import torch\nx = torch.linalg.solve(A, B)\n",
        "import torch\nL = torch.linalg.eigvalsh(A)\nr = torch.linalg.matrix_rank(A)\n",
        # Look-alikes: NumPy/SciPy, a local function, a method on another object.
        "import numpy as np\nimport torch\nx = np.linalg.solve(A, B)\n",
        "import torch\nfrom scipy.linalg import solve\nx = solve(A, B)\n",
        "import torch\ndef solve(a, b):\n    return a\nx = solve(A, B)\n",
        "import torch\nx = solver.solve(A, B)\n",
    ]
    INVALID = [
        Invalid("import torch\nx, lu = torch.solve(B, A)\n"),
        Invalid("import torch as th\ne, v = th.symeig(A, eigenvectors=True)\n"),
        Invalid("from torch import matrix_rank\nr = matrix_rank(A)\n"),
        Invalid("import torch\nsolution, qr = torch.lstsq(B, A)\n"),
        Invalid("import torch\nvalues, _ = torch.eig(A)\n"),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import is False and _imported_by_name(ctx, reference):
            return  # reported once, at ``from torch import solve``
        old = reference.qualname
        yield ctx.diagnostic(
            reference.node,
            f"`{old}` was deprecated in PyTorch 1.9 and removed in {REMOVED_IN[old]} (a stub that raises RuntimeError); "
            f"use {REPLACEMENTS[old]}",
        )


def _imported_by_name(ctx, reference) -> bool:
    node = reference.node
    if not isinstance(node, ast.Name):
        return False
    binding = ctx.scopes.binding_for(node.id, reference.scope, (node.lineno, node.col_offset))
    return binding is not None and binding.import_alias is not None and binding.qualname == reference.qualname
