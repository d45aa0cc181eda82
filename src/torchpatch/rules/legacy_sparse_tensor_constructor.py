"""TP226: the legacy ``torch.sparse.FloatTensor(indices, values, size)``-style constructors warn; use
``torch.sparse_coo_tensor``."""

from __future__ import annotations

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: ``[n for n in dir(torch.sparse) if n.endswith("Tensor")]`` in the 2.13.0 and 2.15.0 wheels, less ``Tensor``
#: (an alias of the dense ``torch.Tensor``: ``torch.sparse.Tensor(2, 2)`` is strided and warns nothing) and
#: ``SparseSemiStructuredTensor`` (a subclass, not a legacy type); ``torch.cuda.sparse`` has the same nine.
_TYPES = ("BFloat16", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")
SPARSE_TENSOR_TYPES = frozenset(f"torch.{module}.{name}Tensor" for module in ("sparse", "cuda.sparse") for name in _TYPES)


class LegacySparseTensorConstructor(Rule):
    """
    ## What it does
    Flags calls of the legacy per-dtype sparse tensor types as constructors:
    `torch.sparse.FloatTensor(indices, values, size)`, `torch.sparse.LongTensor(indices, values)`,
    `torch.sparse.FloatTensor(rows, cols)` and their `torch.cuda.sparse` twins. Naming the types
    without calling them (`isinstance`, `x.type(torch.sparse.FloatTensor)`) is not reported.

    ## Why is this bad?
    Since PyTorch 2.0 (pytorch/pytorch#94850) each form warns, 2.4 through 2.15 included (a `UserWarning`
    from `torch/csrc/utils/tensor_new.cpp`, once per process and form):
    "torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated.  Please use
    torch.sparse_coo_tensor(indices, values, shape, dtype=, device=)." (and the same for the
    `(indices, values)`, `(shape)` and empty forms). Old graph-network code builds its adjacency
    matrices this way.

    ## Example
    ```python
    adjacency = torch.sparse.FloatTensor(indices, values, torch.Size([n, n]))
    ```
    Use instead:
    ```python
    adjacency = torch.sparse_coo_tensor(indices, values, (n, n), dtype=torch.float32)
    ```

    ## Fix safety
    No fix: the legacy constructors take sizes as separate integers or a `torch.Size`, and they check
    the values' dtype against the type where `sparse_coo_tensor` converts or infers it; which call keeps
    the behaviour depends on the arguments at run time.
    """

    code = "TP226"
    name = "legacy-sparse-tensor-constructor"
    summary = ("`torch.sparse.FloatTensor(indices, values, size)` and the other legacy sparse constructors warn "
               "(since 2.0): use `torch.sparse_coo_tensor`")
    deprecated_in = v("2.0")
    replacement_since = v("1.0")
    torch_message = ("torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated.  Please use "
                     "torch.sparse_coo_tensor(indices, values, shape, dtype=, device=).")
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.sparse_coo_tensor.html",
                  "https://github.com/pytorch/pytorch/pull/94850")
    calls = SPARSE_TENSOR_TYPES

    VALID = [
        Valid("import torch\ni = torch.tensor([[0, 1], [1, 0]])\n"
              "a = torch.sparse_coo_tensor(i, torch.ones(2), (2, 2), dtype=torch.float32)\n", torch_runs_clean=True),
        # Naming the type is not constructing one.
        "import torch\nok = x.type() == 'torch.sparse.FloatTensor' or isinstance(x, torch.sparse.FloatTensor)\n",
        "import torch\nx = x.type(torch.sparse.FloatTensor)\n",
        # torch.sparse.Tensor is the dense torch.Tensor (no warning); another library's FloatTensor.
        Valid("import torch\nx = torch.sparse.Tensor(2, 2)\n", torch_runs_clean=True),
        "import torch\nfrom mylib.sparse import FloatTensor\nx = FloatTensor(i, v)\n",
    ]
    INVALID = [
        Invalid("import torch\ni = torch.tensor([[0, 1], [1, 0]])\n"
                "adj = torch.sparse.FloatTensor(i, torch.ones(2), torch.Size([2, 2]))\n",
                torch_warns=r"torch\.sparse\.SparseTensor\(indices, values, shape, \*, device=\) is deprecated"),
        Invalid("import torch\ni = torch.tensor([[0, 1], [1, 0]])\ncounts = torch.sparse.LongTensor(i, torch.tensor([3, 4]))\n",
                torch_warns=r"torch\.sparse\.SparseTensor\(indices, values, \*, device=\) is deprecated"),
        Invalid("import torch\nempty = torch.sparse.DoubleTensor(4, 4)\n",
                torch_warns=r"torch\.sparse\.SparseTensor\(shape, \*, device=\) is deprecated"),
        Invalid("from torch.sparse import FloatTensor as SparseFloat\nadj = SparseFloat(edges, weights, size)\n"),
        Invalid("import torch\nadj = torch.cuda.sparse.FloatTensor(edges, weights, size)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        message = (f"`{qualname}(...)`: the legacy sparse constructors are deprecated since PyTorch 2.0 (torch "
                   f"warns through {ctx.target}); use `torch.sparse_coo_tensor(indices, values, size, dtype=...)`")
        yield ctx.diagnostic(call, message)
