"""TP211: TorchScript helpers (fork, wait, freeze, optimize_for_inference, ...), deprecated in 2.11."""

from __future__ import annotations

from torchpatch.rules._helpers import public_and_defining_names
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: Public name -> the module that defines it (2.4 through 2.15).
_DEFINED_IN = {
    "fork": "torch.jit._async",
    "wait": "torch.jit._async",
    "freeze": "torch.jit._freeze",
    "optimize_for_inference": "torch.jit._freeze",
    "set_fusion_strategy": "torch.jit._fuser",
    "interface": "torch.jit._script",
}
_NAMES = public_and_defining_names("torch.jit", _DEFINED_IN)
#: The helpers whose warning became a FutureWarning (shown by default) in 2.14 (2.14.1/2.15.0 wheels);
#: ``set_fusion_strategy`` still raises a DeprecationWarning there.
_FUTURE_WARNING_FROM_2_14 = frozenset({"fork", "wait", "freeze", "optimize_for_inference", "interface"})


class TorchscriptAuxDeprecated(Rule):
    """
    ## What it does
    Flags uses of the TorchScript helpers `torch.jit.fork`, `torch.jit.wait`, `torch.jit.freeze`,
    `torch.jit.optimize_for_inference`, `torch.jit.set_fusion_strategy` and `torch.jit.interface`
    (calls, decorators, aliases).

    ## Why is this bad?
    PyTorch 2.11 deprecated them along with the rest of TorchScript: each call raises a
    `DeprecationWarning` such as "`torch.jit.fork` is deprecated. Please use `torch.compile`
    instead." From 2.14 it is a `FutureWarning`, which Python shows by default, for all of them
    but `set_fusion_strategy` (still a `DeprecationWarning` in 2.15). They only make sense for
    scripted modules, and TorchScript itself is deprecated (see TP210). There is no mechanical
    replacement: `torch.compile` optimizes and fuses a model in
    process (freezing is `torch._inductor.config.freezing = True`), `torch.export` with AOTInductor
    covers deployment, and inter-op parallelism needs threads or `torch.futures`.
    """

    code = "TP211"
    name = "torchscript-aux-deprecated"
    summary = "TorchScript helpers `torch.jit.fork/wait/freeze/...` (deprecated in 2.11)"
    deprecated_in = v("2.11")
    references = (
        "https://docs.pytorch.org/docs/stable/jit.html",
        "https://docs.pytorch.org/docs/stable/torch.compiler.html",
    )
    catalog_ids = ("jit.aux-deprecated",)
    references_to = frozenset(_NAMES)

    VALID = [
        'import torch\nfut = torch.futures.Future()\n',
        'import concurrent.futures\nwith concurrent.futures.ThreadPoolExecutor() as pool:\n    fut = pool.submit(fn, x)\n',
        'import torch\nx = torch.ones(2)\n',
        'from torch.jit import fork\n',  # the import alone: its uses are reported
        'import os\npid = os.fork()\n',
        'class Pool:\n    def go(self):\n        return self.jit.freeze(self)\n',
        Valid('import torch\nfut = torch.jit.fork(fn, x)\n', target_torch="2.10"),
    ]
    INVALID = [
        Invalid('import torch\nfut = torch.jit.fork(fn, x)\ny = torch.jit.wait(fut)\n'),
        Invalid('import torch\nfrozen = torch.jit.freeze(scripted.eval())\n'),
        Invalid('from torch.jit import optimize_for_inference as ofi\nfast = ofi(frozen)\n'),
        Invalid('import torch\ntorch.jit.set_fusion_strategy([("STATIC", 2)])\n'),
        Invalid('import torch\n@torch.jit.interface\nclass ModuleInterface(torch.nn.Module):\n'
                '    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        pass\n'),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import:
            return
        leaf = _NAMES[reference.qualname]
        category = "DeprecationWarning; FutureWarning from 2.14" if leaf in _FUTURE_WARNING_FROM_2_14 \
            else "DeprecationWarning"
        message = (f"`torch.jit.{leaf}` is {self.version_phrase(ctx.target)} ({category}) with the rest "
                   "of TorchScript: use `torch.compile` (or `torch.export` + AOTInductor for deployment)")
        yield ctx.diagnostic(reference.node, message)
