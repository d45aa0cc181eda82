"""TP231: DataLoader(pin_memory_device=...) is deprecated and ignored since PyTorch 2.9."""

from __future__ import annotations

from torchpatch.rules._helpers import is_literal, keyword, remove_argument
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule
from torchpatch.versions import v

_DATALOADER = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")


class DataloaderPinMemoryDevice(Rule):
    """
    ## What it does
    Flags `pin_memory_device=` in `torch.utils.data.DataLoader(...)` calls, and drops it.

    ## Why is this bad?
    Since PyTorch 2.9 the `DataLoader` ignores `pin_memory_device`: with `pin_memory=True` it
    always pins for the current accelerator (`torch.accelerator.current_accelerator()`) and warns
    `pin_memory_device is deprecated, the current accelerator will be used as the device` each
    time an iterator is created. The argument does nothing there, so dropping it is safe when your
    minimum is 2.9.

    Before 2.9 it chose the device: without it, 2.4–2.6 pinned only when CUDA was available (for
    CUDA) and 2.7–2.8 pinned for the current accelerator, while an explicit value pinned for that
    device. On a CUDA machine `pin_memory_device="cuda"` and the default pin the same memory, but
    for other devices (`"xpu"`, a PrivateUse1 backend) older releases pin differently, so the fix
    is unsafe when your minimum is below 2.9. `pin_memory_device=""` is the default on every
    release and is not reported.
    """

    code = "TP231"
    name = "dataloader-pin-memory-device"
    summary = "`DataLoader(pin_memory_device=...)` (deprecated and ignored since 2.9)"
    deprecated_in = v("2.9")
    fix_safety = SAFE
    fix_safety_note = (
        "From 2.9 the argument is ignored, so dropping it changes nothing. Before 2.9 it chose the device to pin "
        "for (the default pinned for CUDA in 2.4–2.6 and for the current accelerator in 2.7–2.8): the fix is unsafe "
        "when your minimum is below 2.9."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
        "https://docs.pytorch.org/docs/stable/data.html#memory-pinning",
    )
    catalog_ids = ("plat.pin-memory-device",)
    calls = frozenset(_DATALOADER)
    words_needed = frozenset({"pin_memory_device"})  # a keyword argument: its name is in the text

    VALID = [
        "import torch\nloader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, **options)\n",
        # The default value: no warning on any release.
        "import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=2, pin_memory=True, pin_memory_device='')\n",
        # Look-alikes: other libraries' loaders, a local class.
        "import torch\nfrom torch_geometric.loader import DataLoader\nloader = DataLoader(ds, pin_memory_device='cuda')\n",
        "import torch\nclass DataLoader:\n    def __init__(self, ds, pin_memory_device=''):\n        pass\n"
        "loader = DataLoader(ds, pin_memory_device='cuda')\n",
    ]
    INVALID = [
        Invalid("from torch.utils.data import DataLoader\n"
                "loader = DataLoader(ds, batch_size=8, pin_memory=True, pin_memory_device=\"cuda\")\n",
                fixed="from torch.utils.data import DataLoader\n"
                      "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n"),
        Invalid("import torch.utils.data as tud\nloader = tud.DataLoader(\n    ds,\n    pin_memory=True,\n"
                "    pin_memory_device=f\"cuda:{rank}\",\n    num_workers=4,\n)\n",
                fixed="import torch.utils.data as tud\nloader = tud.DataLoader(\n    ds,\n    pin_memory=True,\n"
                      "    num_workers=4,\n)\n",
                min_torch="2.9"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "pin_memory_device")
        if argument is None or is_literal(argument.value, ""):
            return  # keyword-only in every release 2.4–2.15; "" is the default (no warning)
        message = (f"`DataLoader(pin_memory_device=...)` is deprecated and ignored since PyTorch {self.deprecated_in} "
                   "(the current accelerator is used); drop it")
        if ctx.min_torch < self.deprecated_in:
            message += f" (it still chooses the pinning device before 2.9; your minimum is {ctx.min_torch})"
        note = "" if ctx.min_torch >= self.deprecated_in else \
            f" (before 2.9 pinning then follows the default device; your minimum is {ctx.min_torch})"
        fix = Fix(message=f"Drop `pin_memory_device`{note}", edits=[remove_argument(ctx, call, argument)],
                  applicability=ctx.applicability(needs=self.deprecated_in))
        yield ctx.diagnostic(argument, message, fix)
