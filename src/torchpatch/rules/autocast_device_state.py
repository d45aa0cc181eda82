"""TP243: torch.get_autocast_gpu_dtype() and its per-device kin -> the device-generic autocast state functions."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import CALLEE, IMPORT, Insertions, insert_first_argument, reference_role, root_name
from torchpatch.rules._helpers import has_double_star, has_starred, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule
from torchpatch.versions import v

_DEVICES = {"gpu": "cuda", "cpu": "cpu", "xla": "xla", "ipu": "ipu"}

#: Old name -> (new function, device type, number of positional arguments the old one takes). The
#: 2.4.1 and 2.15.0 ``libtorch_python.so`` hold "torch.<old>() is deprecated. Please use
#: torch.<new>('<device>', ...) instead." for exactly these (``TORCH_WARN_DEPRECATION`` in
#: torch/csrc/autograd/init.cpp: a ``DeprecationWarning`` on every call, read in 2.13); the old C++
#: functions read and write the same per-device state as the new ones. There is no
#: ``set_autocast_gpu_enabled``, and ``torch.is_autocast_enabled()`` without a device (CUDA) does not warn.
REPLACEMENTS: dict[str, tuple[str, str, int]] = {}
for _short, _device in _DEVICES.items():
    REPLACEMENTS[f"torch.get_autocast_{_short}_dtype"] = ("torch.get_autocast_dtype", _device, 0)
    REPLACEMENTS[f"torch.set_autocast_{_short}_dtype"] = ("torch.set_autocast_dtype", _device, 1)
    if _short != "gpu":
        REPLACEMENTS[f"torch.is_autocast_{_short}_enabled"] = ("torch.is_autocast_enabled", _device, 0)
        REPLACEMENTS[f"torch.set_autocast_{_short}_enabled"] = ("torch.set_autocast_enabled", _device, 1)


class AutocastDeviceState(Rule):
    """
    ## What it does
    Flags the per-device autocast state functions — `torch.get_autocast_gpu_dtype()`,
    `torch.set_autocast_cpu_dtype(dtype)`, `torch.is_autocast_cpu_enabled()`,
    `torch.set_autocast_cpu_enabled(enabled)` and their `xla`/`ipu` twins — and rewrites them to the
    device-generic functions with the device type as the first argument.

    ## Why is this bad?
    PyTorch 2.4 made autocast's state device-generic and deprecated the per-device functions: each call
    warns "torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda')
    instead." (a `DeprecationWarning` raised from C++, so it is hidden outside `__main__` and tests
    unless warnings are enabled; still in 2.15). `gpu` in the old names means CUDA.

    ## Example
    ```python
    dtype = torch.get_autocast_gpu_dtype()
    ```
    becomes
    ```python
    dtype = torch.get_autocast_dtype("cuda")
    ```

    ## Fix safety
    Safe: the old functions read and write the same per-device state as the new ones in every release
    from 2.4, where the new functions arrived, through 2.15. A name used without being called, or a
    call with unexpected arguments, is reported without a fix.
    """

    code = "TP243"
    name = "autocast-device-state"
    summary = "`torch.get_autocast_gpu_dtype()` and the other per-device autocast state functions (deprecated in 2.4)"
    deprecated_in = v("2.4")
    fix_safety = SAFE
    fix_safety_note = ("The old and new functions read and write the same per-device autocast state "
                       "(2.4-2.15); the new ones exist from 2.4.")
    references = ("https://docs.pytorch.org/docs/stable/amp.html",)
    calls = frozenset(REPLACEMENTS)
    references_to = calls

    VALID = [
        'import torch\ndtype = torch.get_autocast_dtype("cuda")\n',
        'import torch\ntorch.set_autocast_enabled("cpu", False)\n',
        # No device: CUDA's, and not deprecated.
        "import torch\non = torch.is_autocast_enabled()\n",
        # Look-alikes: an object's method, a local function of that name.
        "import torch\ndtype = self.get_autocast_gpu_dtype()\n",
        "import torch\ndef get_autocast_gpu_dtype():\n    return None\nd = get_autocast_gpu_dtype()\n",
    ]
    INVALID = [
        Invalid("import torch\ndtype = torch.get_autocast_gpu_dtype()\n",
                fixed='import torch\ndtype = torch.get_autocast_dtype("cuda")\n'),
        Invalid("import torch as th\nth.set_autocast_cpu_dtype(th.bfloat16)\n",
                fixed='import torch as th\nth.set_autocast_dtype("cpu", th.bfloat16)\n'),
        Invalid("import torch\nif torch.is_autocast_cpu_enabled():\n    torch.set_autocast_cpu_enabled(False)\n",
                fixed='import torch\nif torch.is_autocast_enabled("cpu"):\n    torch.set_autocast_enabled("cpu", False)\n'),
        Invalid("from torch import get_autocast_xla_dtype\nd = get_autocast_xla_dtype()\n",
                fixed='import torch\nd = torch.get_autocast_dtype("xla")\n'),
        # A value, not a call: no fix (the new function needs the device argument).
        Invalid("import torch\nread_dtype = torch.get_autocast_gpu_dtype\n"),
    ]

    def _message(self, ctx, qualname: str) -> str:
        new, device, takes = REPLACEMENTS[qualname]
        arguments = f'"{device}"' + (", ..." if takes else "")
        return (f"`{qualname}` is {self.version_phrase(ctx.target)} (DeprecationWarning, still in 2.15); "
                f"use `{new}({arguments})`")

    def check_call(self, ctx, call, qualname):
        yield ctx.diagnostic(call.func, self._message(ctx, qualname), self._fix(ctx, call, qualname))

    def check_reference(self, ctx, reference):
        if reference_role(reference) in (CALLEE, IMPORT):
            return  # calls are fixed where they happen; the import goes once it is unused
        yield ctx.diagnostic(reference.node, self._message(ctx, reference.qualname))

    def _fix(self, ctx, call: ast.Call, qualname: str) -> Fix | None:
        new, device, takes = REPLACEMENTS[qualname]
        if len(call.args) != takes or call.keywords or has_starred(call) or has_double_star(call):
            return None
        name, import_edits = ctx.name_for(new)
        insertions = Insertions()
        insert_first_argument(ctx, call, f'"{device}"', insertions)
        edits = [*import_edits, replace_node(ctx, call.func, name), *insertions.edits()]
        arguments = f'"{device}"' + (", ..." if takes else "")
        return Fix(message=f"Replace with `{new}({arguments})`", edits=edits, applicability=SAFE,
                   obsolete_names=root_name(call.func))
