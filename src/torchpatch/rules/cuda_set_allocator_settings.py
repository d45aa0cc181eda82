"""TP257: torch.cuda.memory._set_allocator_settings is deprecated since 2.10 (device-generic allocator settings)."""

from __future__ import annotations

from torchpatch.rules._call_sites import root_name
from torchpatch.rules._helpers import replace_node
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule
from torchpatch.versions import v

_OLD = "torch.cuda.memory._set_allocator_settings"
_NEW = "torch._C._accelerator_setAllocatorSettings"


class CudaSetAllocatorSettings(Rule):
    """
    ## What it does
    Flags calls to `torch.cuda.memory._set_allocator_settings(...)` and rewrites them to
    `torch._C._accelerator_setAllocatorSettings(...)`.

    ## Why is this bad?
    PyTorch 2.10 made the caching-allocator settings device-generic: `_set_allocator_settings` is
    decorated with `@deprecated("torch.cuda._set_allocator_settings is deprecated. Use
    torch._C._accelerator_setAllocatorSettings instead.", category=FutureWarning)` in 2.10 … 2.15,
    and its body is now just that call (up to 2.9 it called
    `torch._C._cuda_cudaCachingAllocator_set_allocator_settings`). The
    environment variable has a device-generic name as well: `PYTORCH_ALLOC_CONF`, documented from
    2.10; `PYTORCH_CUDA_ALLOC_CONF` is still read, without a warning, in 2.15 (not flagged).

    The fix is safe when your minimum torch is 2.10 or later: the new function is what the old
    one calls. Below 2.10 `torch._C._accelerator_setAllocatorSettings` does not exist, so the fix
    is unsafe.
    """

    code = "TP257"
    name = "cuda-set-allocator-settings"
    summary = "`torch.cuda.memory._set_allocator_settings` (deprecated 2.10; `torch._C._accelerator_setAllocatorSettings`)"
    deprecated_in = v("2.10")
    replacement_since = v("2.10")
    fix_safety = UNSAFE
    fix_safety_note = ("Safe when min-torch >= 2.10, where the old function only calls the new one; older releases "
                       "have no `torch._C._accelerator_setAllocatorSettings`.")
    references = ("https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-alloc-conf",)
    catalog_ids = ("plat.alloc-conf",)
    calls = frozenset({_OLD})

    VALID = [
        "import torch\ntorch._C._accelerator_setAllocatorSettings('expandable_segments:True')\n",
        "import torch\nsettings = torch.cuda.memory.memory_stats()\n",
    ]
    INVALID = [
        Invalid("import torch\ntorch.cuda.memory._set_allocator_settings('expandable_segments:True')\n",
                min_torch="2.10",
                fixed="import torch\ntorch._C._accelerator_setAllocatorSettings('expandable_segments:True')\n"),
        Invalid("from torch.cuda.memory import _set_allocator_settings\n_set_allocator_settings(conf)\n",
                min_torch="2.11",
                fixed="import torch\ntorch._C._accelerator_setAllocatorSettings(conf)\n"),
        Invalid("import torch\ntorch.cuda.memory._set_allocator_settings('expandable_segments:True')\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.target < self.deprecated_in:
            return
        message = (f"`torch.cuda.memory._set_allocator_settings` is deprecated since PyTorch {self.deprecated_in} "
                   f"(FutureWarning); use `{_NEW}`{ctx.needs_note(self.replacement_since)}")
        text, import_edits = ctx.name_for(_NEW, module="torch")
        fix = Fix(message=f"Use `{_NEW}`", edits=[*import_edits, replace_node(ctx, call.func, text)],
                  applicability=ctx.applicability(needs=self.replacement_since), obsolete_names=root_name(call.func))
        yield ctx.diagnostic(call.func, message, fix)
