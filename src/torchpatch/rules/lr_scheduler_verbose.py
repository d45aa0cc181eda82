"""TP111: the verbose= argument of the learning-rate schedulers was removed in PyTorch 2.7."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args, keyword, remove_argument
from torchpatch.rules.base import SAFE, UNSAFE, CallNeed, Fix, Invalid, Rule
from torchpatch.versions import v

#: Scheduler -> the position of ``verbose`` in its 2.2–2.6 ``__init__`` (always the last parameter;
#: read from src 2.2 and 2.6 torch/optim/lr_scheduler.py; 2.7 removed it from every one of them).
VERBOSE_POSITION = {
    "LRScheduler": 2, "_LRScheduler": 2, "LambdaLR": 3, "MultiplicativeLR": 3, "StepLR": 4, "MultiStepLR": 4,
    "ConstantLR": 4, "LinearLR": 5, "ExponentialLR": 3, "SequentialLR": 4, "PolynomialLR": 4,
    "CosineAnnealingLR": 4, "ReduceLROnPlateau": 9, "CyclicLR": 13, "CosineAnnealingWarmRestarts": 5,
    "OneCycleLR": 14,
}
_MODULE = "torch.optim.lr_scheduler"


class LrSchedulerVerbose(Rule):
    """
    ## What it does
    Flags `verbose=` (by keyword, or by position as the last argument) in calls to the schedulers of
    `torch.optim.lr_scheduler` (`StepLR`, `ReduceLROnPlateau`, `OneCycleLR`, …), and drops it.

    ## Why is this bad?
    `verbose` only printed the learning rate on every step. PyTorch 2.2 deprecated it with a
    `UserWarning` ("Please use get_last_lr() to access the learning rate") and 2.7 removed it from
    every scheduler, so passing it raises `TypeError: __init__() got an unexpected keyword argument
    'verbose'`. Log `scheduler.get_last_lr()` yourself where you want the value.
    """

    code = "TP111"
    name = "lr-scheduler-verbose"
    summary = "`torch.optim.lr_scheduler.*(..., verbose=...)` (deprecated 2.2, removed in 2.7)"
    deprecated_in = v("2.2")
    removed_in = v("2.7")
    fix_safety = SAFE
    fix_safety_note = (
        "The argument only printed the learning rate at each step; dropping it keeps training identical. Safe for "
        "`verbose=False` or when your minimum is 2.7 (where the call raised); otherwise unsafe, because a true "
        "`verbose` printed on 2.2-2.6 and the messages stop (log `scheduler.get_last_lr()` instead)."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    )
    catalog_ids = ("optim.lr-verbose",)
    calls = frozenset(f"{_MODULE}.{name}" for name in VERBOSE_POSITION)
    call_needs = {f"{_MODULE}.{name}": CallNeed(passed=(("verbose", position),))
                  for name, position in VERBOSE_POSITION.items()}

    VALID = [
        "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)\n",
        "from torch.optim.lr_scheduler import ReduceLROnPlateau\nscheduler = ReduceLROnPlateau(optimizer, 'min')\n",
        "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10, 0.1, -1)\n",
        # Look-alikes: transformers' schedulers, a local class, an unrelated verbose=.
        "import torch\nfrom transformers import get_scheduler\nscheduler = get_scheduler('linear', opt, verbose=True)\n",
        "import torch\nclass StepLR:\n    def __init__(self, opt, verbose=False):\n        pass\nStepLR(opt, verbose=True)\n",
        "import torch\nfrom mylib.schedulers import StepLR\nscheduler = StepLR(optimizer, 10, verbose=True)\n",
    ]
    INVALID = [
        Invalid("import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, verbose=True)\n",
                fixed="import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)\n"),
        Invalid("from torch.optim import lr_scheduler as sched\n"
                "scheduler = sched.ReduceLROnPlateau(\n    optimizer,\n    mode=\"min\",\n    verbose=False,\n)\n",
                fixed="from torch.optim import lr_scheduler as sched\n"
                "scheduler = sched.ReduceLROnPlateau(\n    optimizer,\n    mode=\"min\",\n)\n"),
        Invalid("from torch.optim.lr_scheduler import ExponentialLR\nscheduler = ExponentialLR(optimizer, 0.9, -1, True)\n",
                fixed="from torch.optim.lr_scheduler import ExponentialLR\nscheduler = ExponentialLR(optimizer, 0.9, -1)\n"),
        Invalid("from torch.optim.lr_scheduler import OneCycleLR as Sched\n"
                "scheduler = Sched(optimizer, max_lr=0.1, total_steps=100, verbose=args.verbose)\n",
                fixed="from torch.optim.lr_scheduler import OneCycleLR as Sched\n"
                "scheduler = Sched(optimizer, max_lr=0.1, total_steps=100)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "verbose")
        position = VERBOSE_POSITION[qualname.rpartition(".")[2]]
        if argument is not None:
            node = argument
        elif not has_star_args(call) and len(call.args) > position:
            node = call.args[position]
        else:
            return
        class_name = qualname.rpartition(".")[2]
        message = (f"`{class_name}(..., verbose=...)`: the argument was {self.version_phrase(ctx.target)} "
                   f"(TypeError); log `scheduler.get_last_lr()` instead")
        fix = None
        # A positional ``verbose`` can be removed only when it is the last positional argument.
        if node is argument or len(call.args) == position + 1:
            value = node.value if node is argument else node
            # Quiet either way: ``False`` (or the 2.2-2.6 default "deprecated"); on 2.7+ the call raised.
            quiet = type(value) is ast.Constant and value.value in (False, "deprecated")
            same = quiet or ctx.min_torch >= self.removed_in
            fix = Fix(message="Drop `verbose` (it only printed the learning rate)" + (
                          "" if same else f"; unsafe: on {ctx.min_torch}-2.6 a true `verbose` printed it, "
                          "and the messages stop"),
                      edits=[remove_argument(ctx, call, node)], applicability=SAFE if same else UNSAFE)
        yield ctx.diagnostic(node, message, fix)
