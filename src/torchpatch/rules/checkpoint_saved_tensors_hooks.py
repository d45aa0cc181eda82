"""TP442: selective activation checkpointing next to saved_tensors_hooks (FutureWarning since 2.14), and
checkpoint keywords that older releases hand to the checkpointed function."""

from __future__ import annotations

from torchpatch.rules._file_scan import uses_any
from torchpatch.rules._helpers import add_keyword, has_double_star, is_literal, keyword
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_CHECKPOINT = frozenset({"torch.utils.checkpoint.checkpoint"})
_HOOKS = frozenset({"torch.autograd.graph.save_on_cpu", "torch.autograd.graph.saved_tensors_hooks"})
#: Keywords ``checkpoint`` declares only from a release on; before it they fall into ``**kwargs`` and are passed
#: to the checkpointed function (src 2.4 … 2.8 ``function(*args, **kwargs)``; 2.9 adds early_stop, 2.14
#: respect_saved_tensors_hooks).
_NEW_KEYWORDS = {"early_stop": v("2.9"), "respect_saved_tensors_hooks": v("2.14")}


class CheckpointSavedTensorsHooks(Rule):
    """
    ## What it does
    Flags `torch.utils.checkpoint.checkpoint(..., context_fn=...)` (selective activation
    checkpointing, SAC) without `respect_saved_tensors_hooks=` in a file that also uses
    `torch.autograd.graph.save_on_cpu` or `saved_tensors_hooks`, and `checkpoint(...)` calls that
    pass `early_stop=` or `respect_saved_tensors_hooks=` when your minimum torch predates them.

    ## Why is this bad?
    Tensors that SAC saves are kept outside the autograd graph, so a surrounding
    `saved_tensors_hooks` context (for example `save_on_cpu`, to offload activations) never sees
    them: they stay on the GPU. PyTorch 2.14 added `respect_saved_tensors_hooks=` and, while it is
    left at `None`, raises a `FutureWarning` whenever such a hook is active around a SAC region: "a
    future release will route them through the hooks like any other saved tensor". Choose now:
    `True` offloads the SAC tensors too (the future default), `False` keeps the old behaviour.

    `checkpoint` forwards unknown keywords to the function it checkpoints. `early_stop=` became a
    keyword of `checkpoint` in 2.9 and `respect_saved_tensors_hooks=` in 2.14; on older releases
    they are passed to your function, which fails with `TypeError` or silently takes them.

    The fix adds `respect_saved_tensors_hooks=False`, which keeps the current behaviour and
    silences the warning; it is offered only when your minimum torch is 2.14 or later.
    """

    code = "TP442"
    name = "checkpoint-saved-tensors-hooks"
    summary = "SAC `checkpoint(context_fn=...)` with `save_on_cpu`/`saved_tensors_hooks` (FutureWarning since 2.14); new checkpoint keywords on old releases"
    changed_in = v("2.14")
    replacement_since = v("2.14")
    fix_safety = SAFE
    fix_safety_note = "`respect_saved_tensors_hooks=False` is what `None` does on 2.14+, without the warning; offered only when min-torch >= 2.14."
    references = (
        "https://docs.pytorch.org/docs/stable/checkpoint.html",
        "https://github.com/pytorch/pytorch/blob/v2.14.1/torch/utils/checkpoint.py",
    )
    catalog_ids = ("ag.sac-hooks",)
    calls = _CHECKPOINT

    VALID = [
        "import torch\nfrom torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, use_reentrant=False)\n",
        # SAC without any saved-tensors hook in the file.
        "import torch\nfrom torch.utils.checkpoint import checkpoint\n"
        "y = checkpoint(block, x, use_reentrant=False, context_fn=policy)\n",
        Valid("import torch\nfrom torch.utils.checkpoint import checkpoint\n"
              "with torch.autograd.graph.save_on_cpu():\n"
              "    y = checkpoint(block, x, use_reentrant=False, context_fn=policy, respect_saved_tensors_hooks=True)\n",
              min_torch="2.14"),
        Valid("import torch\nfrom torch.utils.checkpoint import checkpoint\n"
              "with torch.autograd.graph.save_on_cpu():\n    y = checkpoint(block, x, use_reentrant=False, context_fn=policy)\n",
              target_torch="2.13"),
        Valid("import torch\ny = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, early_stop=False)\n",
              min_torch="2.9"),
    ]
    INVALID = [
        Invalid("import torch\nfrom torch.utils.checkpoint import checkpoint\n\n"
                "def forward(x):\n    with torch.autograd.graph.save_on_cpu(pin_memory=True):\n"
                "        return checkpoint(block, x, use_reentrant=False, context_fn=sac_policy)\n",
                min_torch="2.14",
                fixed="import torch\nfrom torch.utils.checkpoint import checkpoint\n\n"
                      "def forward(x):\n    with torch.autograd.graph.save_on_cpu(pin_memory=True):\n"
                      "        return checkpoint(block, x, use_reentrant=False, context_fn=sac_policy, "
                      "respect_saved_tensors_hooks=False)\n"),
        Invalid("import torch\nfrom torch.autograd.graph import saved_tensors_hooks\n"
                "from torch.utils.checkpoint import checkpoint\n"
                "class Offload(saved_tensors_hooks):\n    def __init__(self):\n        super().__init__(pack, unpack)\n"
                "y = checkpoint(block, x, use_reentrant=False, context_fn=functools.partial(contexts, policy))\n"),
        Invalid("import torch\ny = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, early_stop=False)\n",
                min_torch="2.8"),
    ]

    def check_call(self, ctx, call, qualname):
        for name, since in _NEW_KEYWORDS.items():
            passed = keyword(call, name)
            if passed is not None and ctx.min_torch < since:
                yield ctx.diagnostic(passed, f"`checkpoint(..., {name}=)` exists since PyTorch {since}; on older "
                                             f"releases (your minimum is {ctx.min_torch}) the keyword is passed to "
                                             f"the checkpointed function")
        if ctx.target < self.changed_in or has_double_star(call):
            return
        context_fn = keyword(call, "context_fn")
        if context_fn is None or keyword(call, "respect_saved_tensors_hooks") is not None:
            return
        reentrant = keyword(call, "use_reentrant")
        if reentrant is not None and is_literal(reentrant.value, True):
            return  # the reentrant variant ignores the hooks question (and context_fn is not allowed with it)
        if not any(name.rpartition(".")[2] in ctx.text for name in _HOOKS) or not uses_any(ctx, _HOOKS):
            return
        message = (f"selective activation checkpointing with `save_on_cpu`/`saved_tensors_hooks` in the file: SAC's "
                   f"saved tensors bypass the hooks, and since PyTorch {self.changed_in} this warns (FutureWarning) "
                   f"that a future release routes them through; pass `respect_saved_tensors_hooks=True|False`")
        fix = None
        if ctx.min_torch >= self.changed_in:
            fix = Fix(message="Pass `respect_saved_tensors_hooks=False` (today's behaviour, no warning)",
                      edits=[add_keyword(ctx, call, "respect_saved_tensors_hooks=False")], applicability=SAFE)
        yield ctx.diagnostic(call.func, message, fix)
