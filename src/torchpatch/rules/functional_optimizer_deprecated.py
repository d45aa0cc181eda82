"""TP255: the TorchScript functional optimizers of torch.distributed.optim (`_FunctionalAdam`, ...) are deprecated."""

from __future__ import annotations

from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

_PACKAGE = "torch.distributed.optim"
#: The eight classes of 2.4.1 … 2.15.0 and the module each is defined in (src torch/distributed/optim/*.py).
_CLASSES = {
    "_FunctionalAdadelta": "functional_adadelta", "_FunctionalAdagrad": "functional_adagrad",
    "_FunctionalAdam": "functional_adam", "_FunctionalAdamax": "functional_adamax",
    "_FunctionalAdamW": "functional_adamw", "_FunctionalRMSprop": "functional_rmsprop",
    "_FunctionalRprop": "functional_rprop", "_FunctionalSGD": "functional_sgd",
}
_CALLS = frozenset({
    *(f"{_PACKAGE}.{name}" for name in _CLASSES),
    *(f"{_PACKAGE}.{module}.{name}" for name, module in _CLASSES.items()),
    # Builds one of the classes above (``_create_functional_optim``), so it warns as well.
    f"{_PACKAGE}.as_functional_optim", f"{_PACKAGE}.utils.as_functional_optim",
})


class FunctionalOptimizerDeprecated(Rule):
    """
    ## What it does
    Flags the construction of the TorchScript functional optimizers of `torch.distributed.optim`
    (`_FunctionalAdam`, `_FunctionalSGD`, `_FunctionalAdamW`, ... and
    `torch.distributed.optim.as_functional_optim(...)`, which builds one).

    ## Why is this bad?
    TorchScript support for these optimizers is deprecated: "`TorchScript` support for functional
    optimizers is deprecated and will be removed in a future PyTorch release. Consider using the
    `torch.compile` optimizer instead." In 2.4 and 2.5 the `DeprecationWarning` fired when
    `torch.distributed.optim` was imported (whoever imported it); since 2.6 each `_Functional*`
    constructor raises it, always (the warning filter is set to "always"). TorchScript itself is
    deprecated too (TP210, since 2.10); the replacement is a regular `torch.optim` optimizer whose
    `step` runs under `torch.compile`
    (`opt = torch.optim.Adam(params); step = torch.compile(opt.step)`).

    There is no fix: the functional optimizers take gradients as arguments
    (`step_param(param, grad)`), a different calling convention from `torch.optim`.
    """

    code = "TP255"
    name = "functional-optimizer-deprecated"
    summary = "TorchScript functional optimizers `torch.distributed.optim._Functional*` (deprecated; use a compiled `torch.optim` optimizer)"
    deprecated_in = v("2.4")
    references = (
        "https://docs.pytorch.org/tutorials/recipes/compiling_optimizer.html",
        "https://github.com/pytorch/pytorch/blob/v2.6.0/torch/distributed/optim/_deprecation_warning.py",
    )
    catalog_ids = ("jit.functional-optim",)
    calls = _CALLS

    VALID = [
        "import torch\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\nstep = torch.compile(opt.step)\n",
        "from torch.distributed.optim import ZeroRedundancyOptimizer\nopt = ZeroRedundancyOptimizer(ps, torch.optim.Adam)\n",
        # A look-alike defined in the project.
        "import torch\nclass _FunctionalAdam:\n    pass\nopt = _FunctionalAdam()\n",
    ]
    INVALID = [
        Invalid("from torch.distributed.optim import _FunctionalAdam\nopt = _FunctionalAdam(params, lr=1e-3)\n"),
        Invalid("import torch.distributed.optim.functional_sgd as fsgd\nopt = fsgd._FunctionalSGD([], lr=0.1, "
                "_allow_empty_param_list=True)\n"),
        Invalid("import torch\nfrom torch.distributed.optim import as_functional_optim\n"
                "opt = as_functional_optim(torch.optim.SGD, lr=0.1)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        name = qualname.rpartition(".")[2]
        message = (f"`{name}`: TorchScript functional optimizers are deprecated (a DeprecationWarning since PyTorch "
                   f"{self.deprecated_in}, raised on construction since 2.6); use a `torch.optim` optimizer with a "
                   f"compiled `step`")
        yield ctx.diagnostic(call.func, message)
