"""TP244: torch.cross(a, b) without dim= (its default dimension is deprecated since 2.2)."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules._helpers import has_double_star, has_starred, keyword
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: ``torch.cross(input, other, dim=None, *, out=None)``: ``dim`` is the third positional argument; of the method
#: ``Tensor.cross(other, dim=None)``, the second.
_DIM_POSITION = 2
_METHOD_DIM_POSITION = 1


class CrossWithoutDim(Rule):
    """
    ## What it does
    Flags calls to `torch.cross` that do not pass `dim` (or pass `dim=None`), and the method
    `a.cross(b)` where `a` is known to be a tensor.

    ## Why is this bad?
    Without `dim`, `torch.cross` crosses along the *first* dimension of size 3, which is not the vector
    dimension as soon as another dimension happens to be 3 long (a batch of three `(3, 3)` vectors, an
    `(N, 3)` batch with `N == 3`). PyTorch 2.2 deprecated that default (pytorch/pytorch#108760): the
    first such call in a process warns "Using torch.cross without specifying the dim arg is deprecated
    ... The default value of dim will change to agree with that of linalg.cross in a future release"
    (a `UserWarning` from `aten/src/ATen/native/Cross.cpp`, present in every wheel from 2.4.1 to 2.15.0).
    The announced default is `dim=-1`, that of `torch.linalg.cross` (since 1.11), so code that relies on
    today's default will change results, or fail, when it flips.

    The method form `a.cross(b)` warns the same (torch 2.13 and 2.15); it is flagged where `a` is known
    to be a tensor (built by a torch factory or op, annotated `torch.Tensor`, ...), not on other receivers:
    NumPy-like and SymPy vectors have a `cross` method of their own.

    ## Example
    ```python
    normals = torch.cross(edges_a, edges_b)
    ```
    Use instead:
    ```python
    normals = torch.cross(edges_a, edges_b, dim=-1)  # or torch.linalg.cross(edges_a, edges_b)
    ```

    ## Fix safety
    No fix: which dimension holds the vectors depends on the shapes at run time. `dim=-1` (or
    `torch.linalg.cross`) keeps behaviour only where the first dimension of size 3 is the last one.
    """

    code = "TP244"
    name = "cross-without-dim"
    summary = "`torch.cross` without `dim=` (its first-size-3-dimension default is deprecated since 2.2)"
    deprecated_in = v("2.2")
    replacement_since = v("1.11")
    references = (
        "https://pytorch.org/docs/stable/generated/torch.cross.html",
        "https://github.com/pytorch/pytorch/pull/108760",
    )
    calls = frozenset({"torch.cross"})
    methods = frozenset({"cross"})
    torch_message = "Using torch.cross without specifying the dim arg is deprecated."

    VALID = [
        "import torch\nn = torch.cross(a, b, dim=-1)\n",
        "import torch\nn = torch.cross(a, b, 1)\n",
        "import torch\nn = torch.linalg.cross(a, b)\n",
        "import torch\nn = torch.cross(*pair)\n",
        "import torch\nopts = {'dim': 1}\nn = torch.cross(a, b, **opts)\n",
        # Look-alikes: NumPy's cross, a tensor's method, a local function of the same name.
        "import numpy as np\nimport torch\nn = np.cross(a, b)\n",
        "import torch\nn = a.cross(b)\n",
        "import sympy\nimport torch\nv = sympy.Matrix([1, 0, 0])\nn = v.cross(sympy.Matrix([0, 1, 0]))\n",
        Valid("import torch\na = torch.randn(4, 3)\nn = a.cross(torch.randn(4, 3), dim=1)\n", torch_runs_clean=True),
        Valid("import torch\na = torch.randn(4, 3)\nn = a.cross(torch.randn(4, 3), -1)\n", torch_runs_clean=True),
        "import torch\ndef cross(a, b):\n    return a\nn = cross(a, b)\n",
    ]
    INVALID = [
        Invalid("import torch\nnormals = torch.cross(edges_a, edges_b)\n"),
        Invalid("import torch\nn = torch.cross(a, b, dim=None)\n"),
        Invalid("from torch import cross\nn = cross(a - c, b - c)\n"),
        Invalid("import torch as th\nn = th.cross(a, b, out=result)\n"),
        Invalid("import torch\na = torch.randn(4, 3)\nb = torch.randn(4, 3)\nn = torch.cross(a, b)\n",
                torch_warns="Using torch.cross without specifying the dim arg is deprecated"),
        Invalid("import torch\na = torch.randn(4, 3)\nn = a.cross(torch.randn(4, 3))\n",
                torch_warns="Using torch.cross without specifying the dim arg is deprecated"),
        Invalid("import torch\ndef normal(u: torch.Tensor, v: torch.Tensor):\n    return u.cross(v)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if not _passes_no_dim(call, _DIM_POSITION):
            return
        message = (
            f"`torch.cross` without `dim=` is deprecated since PyTorch {self.deprecated_in} (a UserWarning through "
            "2.15): it crosses along the first dimension of size 3, and the default is to become `dim=-1` like "
            "`torch.linalg.cross`; pass `dim=` for the dimension that holds the vectors"
        )
        yield ctx.diagnostic(call.func, message)

    def check_method_call(self, ctx, call):
        if not _passes_no_dim(call, _METHOD_DIM_POSITION) or not receivers.is_tensor(ctx, call.func.value):
            return
        message = (
            f"`Tensor.cross` without `dim=` is deprecated since PyTorch {self.deprecated_in} (torch warns \"Using "
            "torch.cross without specifying the dim arg is deprecated\" through 2.15): it crosses along the first "
            "dimension of size 3, and the default is to become `dim=-1`; pass `dim=` for the dimension that holds "
            "the vectors"
        )
        yield ctx.diagnostic(call.func, message)


def _passes_no_dim(call: ast.Call, position: int) -> bool:
    """No ``dim`` in the call, or ``dim=None`` (a starred argument may hold one: then not known)."""
    if has_starred(call) or has_double_star(call) or len(call.args) > position:
        return False
    dim = keyword(call, "dim")
    return dim is None or (isinstance(dim.value, ast.Constant) and dim.value.value is None)
