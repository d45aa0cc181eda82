"""TP203: torch.cpu.amp.autocast / GradScaler → torch.amp with "cpu"."""

from __future__ import annotations

from torchpatch.rules._amp_api import AmpApiRule, watched_names
from torchpatch.rules.base import SAFE, Invalid
from torchpatch.versions import v


class CpuAmpApi(AmpApiRule):
    """
    ## What it does
    Flags `torch.cpu.amp.autocast` and `torch.cpu.amp.GradScaler` — called or imported
    (`from torch.cpu.amp import autocast`, `from torch.cpu import amp`) — and rewrites them to
    `torch.amp.autocast("cpu", ...)` and `torch.amp.GradScaler("cpu", ...)`.

    ## Why is this bad?
    PyTorch 2.4 deprecated the CPU-specific AMP entry points (each use emits a `FutureWarning`). The
    old classes call the `torch.amp` ones with `"cpu"`, so the rewrite keeps the behaviour — but
    the positional arguments moved: `torch.cpu.amp.autocast(enabled, dtype, cache_enabled)` became
    `torch.amp.autocast(device_type, dtype, enabled, cache_enabled)`. The fix names every
    positional argument, so `autocast(True, torch.bfloat16)` cannot turn into a call that passes
    `True` as the dtype, and writes the old class's pinned `dtype=torch.bfloat16` when the call
    passes none (the new class would inherit an enclosing autocast's dtype instead).

    A reference that is not called is reported without a fix. A fixed `GradScaler` construction builds
    `torch.amp.GradScaler`, the old class's base, so `isinstance(scaler, torch.cpu.amp.GradScaler)` is
    False for it: the construction fix is unsafe (a type test in another module cannot be seen), and
    such a type test in checked code is reported with a message that says so.
    """

    code = "TP203"
    name = "cpu-amp-api"
    summary = "`torch.cpu.amp.autocast` / `GradScaler` are deprecated: use `torch.amp` with \"cpu\""
    module = "torch.cpu.amp"
    device = "cpu"
    pinned_dtype = "bfloat16"
    deprecated_in = v("2.4")
    replacement_since = v("2.3")
    fix_safety = SAFE
    fix_safety_note = (
        "The old classes call the `torch.amp` ones with `\"cpu\"`. `torch.cpu.amp.autocast()` pins "
        "`dtype=torch.bfloat16` while `torch.amp.autocast(\"cpu\")` inherits an enclosing autocast's dtype "
        "(float16 inside `torch.autocast(\"cpu\", dtype=torch.float16)`, checked on 2.13), so the fix writes "
        "`dtype=torch.bfloat16` when none is passed (unsafe with `**options`). The inherited `cache_enabled` "
        "changes caching of cast weights, not results. The fix of a `GradScaler` construction is unsafe: it builds "
        "the base class, so `isinstance(scaler, torch.cpu.amp.GradScaler)` tests elsewhere turn False."
    )
    references = ("https://pytorch.org/docs/stable/amp.html#cpu-op-specific-behavior",)
    torchfix_codes = ("TOR101",)
    catalog_ids = ("amp.cpu-autocast", "amp.cpu-gradscaler")
    calls = watched_names("torch.cpu.amp", ("autocast", "GradScaler"))
    references_to = calls

    VALID = [
        'import torch\nwith torch.amp.autocast("cpu", dtype=torch.bfloat16):\n    y = model(x)\n',
        'import torch\nwith torch.autocast("cpu"):\n    pass\n',
        'import torch\nscaler = torch.amp.GradScaler("cpu")\n',
        'import torch\nclass Box:\n    amp = None\nwith box.cpu.amp.autocast():\n    pass\n',
    ]
    INVALID = [
        Invalid('import torch\nwith torch.cpu.amp.autocast():\n    y = model(x)\n',
                fixed='import torch\nwith torch.amp.autocast("cpu", dtype=torch.bfloat16):\n    y = model(x)\n'),
        Invalid('import torch\nwith torch.cpu.amp.autocast(True, torch.float16, False):\n    y = model(x)\n',
                fixed='import torch\nwith torch.amp.autocast("cpu", enabled=True, dtype=torch.float16, cache_enabled=False):\n    y = model(x)\n'),
        Invalid('import torch\nfrom torch.cpu.amp import autocast\n\n@autocast(dtype=torch.bfloat16)\ndef forward(x):\n    return x\n',
                fixed='import torch\n\n@torch.amp.autocast("cpu", dtype=torch.bfloat16)\ndef forward(x):\n    return x\n'),
        Invalid('from torch.cpu import amp\nscaler = amp.GradScaler(init_scale=1024.0)\n',
                fixed='import torch\nscaler = torch.amp.GradScaler("cpu", init_scale=1024.0)\n'),
        Invalid('import torch.cpu.amp\nscaler = torch.cpu.amp.GradScaler(1024.0)\n',
                fixed='import torch.cpu.amp\nscaler = torch.amp.GradScaler("cpu", init_scale=1024.0)\n'),
        Invalid('import torch\nfrom torch.cpu.amp.autocast_mode import autocast\nctx = autocast()\n',
                fixed='import torch\nctx = torch.amp.autocast("cpu", dtype=torch.bfloat16)\n'),
        Invalid('import torch\nAutocast = torch.cpu.amp.autocast\n'),
    ]
