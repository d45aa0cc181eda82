"""TP225: the legacy ``torch.cuda.FloatTensor(...)``-style constructors warn; build tensors with a factory."""

from __future__ import annotations

from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

#: ``[n for n in dir(torch.cuda) if n.endswith("Tensor")]`` in the 2.13.0 and 2.15.0 wheels.
_TYPES = ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")
CUDA_TENSOR_TYPES = frozenset(f"torch.cuda.{name}Tensor" for name in _TYPES)


class CudaTypedTensorConstructor(Rule):
    """
    ## What it does
    Flags calls of the legacy per-dtype CUDA tensor types as constructors: `torch.cuda.FloatTensor(2, 3)`,
    `torch.cuda.IntTensor([0])`, `torch.cuda.LongTensor(n).random_(...)`, and the other
    `torch.cuda.<Dtype>Tensor` names. Naming the types without calling them (`isinstance(x,
    torch.cuda.FloatTensor)`, `x.type(torch.cuda.LongTensor)`) is not reported. There is no automatic fix.

    ## Why is this bad?
    Since PyTorch 2.1 (user reports from the 2.1.0 development builds of August 2023 on), every CUDA
    build warns on such a call, 2.4 through 2.15 included: "The
    torch.cuda.*DtypeTensor constructors are no longer recommended. It's best to use methods such as
    torch.tensor(data, dtype=*, device='cuda') to create tensors." (a `UserWarning` from
    `torch/csrc/utils/tensor_new.cpp`, shown once per process unless `torch.set_warn_always(True)`; the
    2.15.0 cu132 wheel emits it before it finds no GPU, and the 2.4.0 wheel's `libtorch_python.so`
    carries the same text; CPU-only builds raise `TypeError` for these types instead). The
    constructors mix two meanings that the factories keep apart: integers are a size (uninitialised
    memory, `torch.empty(2, 3, device="cuda")`), a list is data (`torch.tensor([0], dtype=torch.int32,
    device="cuda")`). Which one a call means depends on its arguments' runtime types, so the rewrite is
    left to you.
    """

    code = "TP225"
    name = "cuda-typed-tensor-constructor"
    summary = ("`torch.cuda.FloatTensor(...)` and the other `torch.cuda.<Dtype>Tensor` constructors warn "
               "(since 2.1): use `torch.tensor`/`torch.empty`/`torch.zeros` with `device=\"cuda\"`")
    deprecated_in = v("2.1")
    torch_message = ("The torch.cuda.*DtypeTensor constructors are no longer recommended. It's best to use "
                     "methods such as torch.tensor(data, dtype=*, device='cuda') to create tensors.")
    references = ("https://docs.pytorch.org/docs/stable/tensors.html",)
    calls = CUDA_TENSOR_TYPES

    VALID = [
        "import torch\nbuf = torch.tensor([0], dtype=torch.int32, device='cuda')\n",
        "import torch\nx = torch.empty(2, 3, device='cuda')\n",
        # Naming the type is not constructing one: no warning.
        "import torch\nok = isinstance(x, torch.cuda.FloatTensor)\n",
        "import torch\nlabel = label.type(torch.cuda.LongTensor)\n",
        "import torch\nkind = torch.cuda.HalfTensor if half else torch.cuda.FloatTensor\n",
        # The CPU legacy constructors do not warn (2.13, 2.15).
        "import torch\nx = torch.FloatTensor(2, 3)\n",
        # Look-alikes: another library's FloatTensor.
        "import torch\nfrom mylib.cuda import FloatTensor\nx = FloatTensor(4)\n",
    ]
    INVALID = [
        Invalid("import torch\nbuf = torch.cuda.IntTensor([0])\n"),
        Invalid("import torch\nx = torch.cuda.FloatTensor(4, 5).zero_()\n"),
        Invalid("from torch.cuda import LongTensor\nusers = LongTensor(64).random_(0, 10)\n"),
        Invalid("import torch as th\nx = th.cuda.ByteTensor(size)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        message = (f"`{qualname}(...)`: the legacy CUDA type constructors warn since PyTorch 2.1 (still in {ctx.target}); "
                   f"use `torch.tensor(data, dtype=..., device=\"cuda\")` for data or `torch.empty`/`torch.zeros"
                   f"(size, dtype=..., device=\"cuda\")` for a size")
        yield ctx.diagnostic(call, message)
