"""TP401: torch.utils.checkpoint.checkpoint / checkpoint_sequential without an explicit use_reentrant."""

from __future__ import annotations

from torchpatch.rules._helpers import has_starred
from torchpatch.rules._helpers import add_keyword, has_double_star, keyword
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: ``checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs)``: the fourth
#: positional argument is ``use_reentrant`` (in ``checkpoint`` it is keyword-only, after ``*args``).
_SEQUENTIAL_POSITION = 3


class CheckpointUseReentrant(Rule):
    """
    ## What it does
    Flags calls to `torch.utils.checkpoint.checkpoint` and `checkpoint_sequential` that do not pass
    `use_reentrant=`.

    ## Why is this bad?
    Since PyTorch 2.1 both functions warn on every call without `use_reentrant` (a `UserWarning`),
    and the warning has announced an error "in version 2.4", then "in 2.9"; through 2.15 it is
    still only a warning and the default is still the reentrant variant (`use_reentrant=True`).
    PyTorch recommends `use_reentrant=False`: it supports keyword arguments, inputs that do not
    require grad, `torch.autograd.grad`, nested checkpoints and early stopping, and does not
    silently produce no gradients when no input requires grad. It is not a drop-in change,
    though: the reentrant variant runs the backward of the recomputed segment as a separate
    graph, and code that relies on that (or on its RNG and hook behaviour) can behave differently.

    The fix adds `use_reentrant=False` and is unsafe: test training after applying it, or pass
    `use_reentrant=True` to keep today's behaviour and silence the warning.

    ## Which working code changes behaviour
    None, through 2.15: the default is still `use_reentrant=True` and the call only warns (the
    announced error never came). The rule is on by default all the same: torch 2.13 warns on every
    such call ("Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an
    exception"), and the function is known from its qualified name, so every finding is a line
    where torch warns.
    """

    code = "TP401"
    torch_message = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                     "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                     "use_reentrant=False is recommended, but if you need to preserve the current default "
                     "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                     "differences between the two variants.")
    name = "checkpoint-use-reentrant"
    summary = "`torch.utils.checkpoint` without `use_reentrant=` (warns since 2.1; default still True)"
    deprecated_in = v("2.1")
    replacement_since = v("2.1")
    fix_safety = UNSAFE
    fix_safety_note = (
        "`use_reentrant=False` switches to the non-reentrant implementation PyTorch recommends; gradients are "
        "the same for ordinary models, but hooks, RNG state handling and code that depends on the reentrant "
        "backward can differ. Pass `use_reentrant=True` instead to keep the current behaviour."
    )
    references = (
        "https://pytorch.org/docs/stable/checkpoint.html",
    )
    torchfix_codes = ("TOR003",)
    catalog_ids = ("ag.checkpoint-use-reentrant",)
    calls = frozenset({
        "torch.utils.checkpoint.checkpoint",
        "torch.utils.checkpoint.checkpoint_sequential",
    })

    VALID = [
        'import torch\nfrom torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, use_reentrant=False)\n',
        'import torch\ny = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=True)\n',
        'from torch.utils.checkpoint import checkpoint_sequential\ny = checkpoint_sequential(model, 2, x, False)\n',
        'import torch\nopts = {"use_reentrant": False}\ny = torch.utils.checkpoint.checkpoint(block, x, **opts)\n',
        # Look-alikes: Lightning/DeepSpeed-style checkpoint helpers, a local function.
        'import torch\nfrom deepspeed import checkpointing\ny = checkpointing.checkpoint(block, x)\n',
        'import torch\ndef checkpoint(fn, *args):\n    return fn(*args)\ny = checkpoint(block, x)\n',
        Valid('import torch\nclass Block(torch.nn.Module):\n    def forward(self, x):\n        return self.checkpoint(self.inner, x)\n'),
        Valid('import torch\nfrom torch.utils.checkpoint import checkpoint\nlayer = torch.nn.Linear(3, 3)\n'
              'y = checkpoint(layer, torch.randn(2, 3, requires_grad=True), use_reentrant=False)\n',
              torch_runs_clean=True),
    ]
    INVALID = [
        Invalid('import torch\ny = torch.utils.checkpoint.checkpoint(block, x)\n',
                fixed='import torch\ny = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n'),
        Invalid('from torch.utils.checkpoint import checkpoint as ckpt\n\ndef forward(self, x):\n'
                '    return ckpt(\n        self.layer,\n        x,\n        preserve_rng_state=False,\n    )\n',
                fixed='from torch.utils.checkpoint import checkpoint as ckpt\n\ndef forward(self, x):\n'
                '    return ckpt(\n        self.layer,\n        x,\n        preserve_rng_state=False,\n        use_reentrant=False,\n    )\n'),
        Invalid('import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(model, 2, x)\n',
                fixed='import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(model, 2, x, use_reentrant=False)\n'),
        Invalid('from torch.utils import checkpoint\nouts = [checkpoint.checkpoint(layer, *inputs) for layer in layers]\n',
                fixed='from torch.utils import checkpoint\nouts = [checkpoint.checkpoint(layer, *inputs, use_reentrant=False) for layer in layers]\n'),
        Invalid('import torch\nfrom torch.utils.checkpoint import checkpoint\nlayer = torch.nn.Linear(3, 3)\n'
                'y = checkpoint(layer, torch.randn(2, 3, requires_grad=True))\n',
                fixed='import torch\nfrom torch.utils.checkpoint import checkpoint\nlayer = torch.nn.Linear(3, 3)\n'
                      'y = checkpoint(layer, torch.randn(2, 3, requires_grad=True), use_reentrant=False)\n',
                torch_warns="use_reentrant parameter should be passed explicitly"),
    ]

    def check_call(self, ctx, call, qualname):
        if keyword(call, "use_reentrant") is not None or has_double_star(call):
            return
        sequential = qualname.endswith("checkpoint_sequential")
        if sequential and (len(call.args) > _SEQUENTIAL_POSITION or has_starred(call)):
            return  # passed positionally (or maybe, through *args)
        function = "checkpoint_sequential" if sequential else "checkpoint"
        message = (
            f"`{function}` without `use_reentrant=` warns since PyTorch {self.deprecated_in} and still defaults to "
            "the reentrant variant (True) through 2.15: pass `use_reentrant=False` (recommended) or `True`"
        )
        fix = Fix(
            message="Pass `use_reentrant=False` (the non-reentrant variant: review code that relies on the reentrant one)",
            edits=[add_keyword(ctx, call, "use_reentrant=False")],
            applicability=UNSAFE,
        )
        yield ctx.diagnostic(call.func, message, fix)
