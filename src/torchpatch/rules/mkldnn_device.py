"""TP240: `torch.device("mkldnn")` warns as deprecated since PyTorch 2.6."""

from __future__ import annotations

from torchpatch.rules._helpers import argument, literal
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v


class MkldnnDevice(Rule):
    """
    ## What it does
    Flags `torch.device("mkldnn")` (and `"mkldnn:0"`, `type="mkldnn"`) with a literal device string.

    ## Why is this bad?
    `mkldnn` is not a device: oneDNN tensors live on the CPU. From PyTorch 2.6 parsing the device
    type warns "'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be
    deprecated and removed in the future. Please use other valid device types instead" (a C++
    warning: the string is in `libc10.so` of the 2.6.0 … 2.15.0 wheels, not in 2.4.1 or 2.5.1;
    raised on 2.13). Use `torch.device("cpu")`; `tensor.to_mkldnn()` and `torch.utils.mkldnn.to_mkldnn(module)`
    still work without a warning in 2.15.
    """

    code = "TP240"
    name = "mkldnn-device"
    summary = "`torch.device(\"mkldnn\")` (deprecated since 2.6: not a device type; use \"cpu\")"
    deprecated_in = v("2.6")
    fix_safety_note = (
        "No fix: code that compares `device.type == \"mkldnn\"` or dispatches on it would change; "
        "replace it with \"cpu\" by hand."
    )
    references = ("https://github.com/pytorch/pytorch/blob/main/c10/core/Device.cpp",)
    catalog_ids = ("plat.mkldnn",)
    calls = frozenset({"torch.device"})
    # The literal is written out (one spelled with escapes or split in pieces, "mkl" "dnn", is not seen).
    words_needed = frozenset({"mkldnn"})

    VALID = [
        "import torch\ndevice = torch.device(\"cpu\")\nx = x.to_mkldnn()\n",
        "import torch\ndevice = torch.device(name)\n",
        Valid("import torch\ndevice = torch.device(\"mkldnn\")\n", target_torch="2.5"),
    ]
    INVALID = [
        Invalid("import torch\ndevice = torch.device(\"mkldnn\")\n"),
        Invalid("from torch import device\nd = device(type=\"mkldnn\", index=0)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        found = argument(call, "type", 0)
        if found is None:
            return
        node, value = found
        try:
            text = literal(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return
        if not isinstance(text, str) or text.partition(":")[0] != "mkldnn":
            return
        yield ctx.diagnostic(node, (
            f"`torch.device(\"mkldnn\")` is deprecated since PyTorch {self.deprecated_in} (a UserWarning: "
            "'mkldnn' is no longer used as device type); use \"cpu\""))
