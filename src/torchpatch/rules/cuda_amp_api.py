"""TP202: torch.cuda.amp.autocast / GradScaler / custom_fwd / custom_bwd → torch.amp with "cuda"."""

from __future__ import annotations

from torchpatch.rules._amp_api import AmpApiRule, watched_names
from torchpatch.rules.base import SAFE, Invalid
from torchpatch.versions import v


class CudaAmpApi(AmpApiRule):
    """
    ## What it does
    Flags `torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd` and
    `torch.cuda.amp.custom_bwd` — called, used as decorators, or imported (`from torch.cuda.amp import
    autocast`, `from torch.cuda import amp`, `import torch.cuda.amp as amp`) — and rewrites them to
    the device-generic `torch.amp` API.

    ## Why is this bad?
    PyTorch 2.4 deprecated the CUDA-specific AMP entry points (each use emits a `FutureWarning`) in
    favour of `torch.amp.autocast("cuda", ...)`, `torch.amp.GradScaler("cuda", ...)` and
    `torch.amp.custom_fwd/custom_bwd(device_type="cuda")`. The old ones are thin wrappers that call
    the new ones with `"cuda"`, so the rewrite keeps the behaviour — but not the default dtype
    and not the positional
    arguments: `torch.cuda.amp.autocast(enabled, dtype, cache_enabled)` became
    `torch.amp.autocast(device_type, dtype, enabled, cache_enabled)`, so a blind rename turns
    `autocast(False)` into `autocast("cuda", False)`, which passes `False` as the dtype. The fix
    therefore names every positional argument (`autocast("cuda", enabled=False)`), and
    `custom_fwd`/`custom_bwd` get their required keyword `device_type="cuda"`.

    `torch.cuda.amp.autocast()` pins `dtype=torch.float16`; `torch.amp.autocast("cuda")` without
    a dtype reads `torch.get_autocast_dtype("cuda")`, which an enclosing
    `torch.autocast("cuda", dtype=torch.bfloat16)` (or `torch.set_autocast_dtype`) changes: the
    inner region would compute in bfloat16 instead of float16 (checked on 2.13; the same code in
    the 2.4.1 and 2.15.0 wheels). The fix therefore writes `dtype=torch.float16` when the call
    passes none; with `**options` it cannot know, and the fix is unsafe.

    A reference that is not called (`ctx = torch.cuda.amp.autocast`, a base class,
    `isinstance(x, torch.cuda.amp.GradScaler)`) is reported without a fix. A subclass of
    `torch.cuda.amp.GradScaler` reaches its deprecated `__init__`; its message says to subclass
    `torch.amp.GradScaler` instead, whose `__init__` takes the device first.

    The fixed construction `torch.amp.GradScaler("cuda", ...)` builds the old class's base class, so a
    type test `isinstance(scaler, torch.cuda.amp.GradScaler)` (2.4-2.15: the old class subclasses the
    new one) is False for it. The linter reads one file at a time and cannot see a test in another
    module or a library (mmf's trainer tests check their scaler this way), so the fix of a `GradScaler`
    construction is unsafe; each such test in checked code is reported and its message says so: change
    the constructions and the tests together.
    """

    code = "TP202"
    name = "cuda-amp-api"
    summary = "`torch.cuda.amp.*` (autocast, GradScaler, custom_fwd/bwd) is deprecated: use `torch.amp` with \"cuda\""
    module = "torch.cuda.amp"
    device = "cuda"
    pinned_dtype = "float16"
    deprecated_in = v("2.4")
    replacement_since = v("2.4")
    fix_safety = SAFE
    fix_safety_note = (
        "The old classes and decorators call the `torch.amp` ones with `\"cuda\"`. `torch.cuda.amp.autocast()` "
        "pins `dtype=torch.float16` while `torch.amp.autocast(\"cuda\")` inherits an enclosing autocast's dtype, "
        "so the fix writes `dtype=torch.float16` when none is passed (unsafe with `**options`, which may or may "
        "not hold one). The old class also pins `cache_enabled=True` where the new one inherits it: that changes "
        "caching of cast weights, not results. Unsafe when your minimum torch is older than the replacement "
        "(`torch.amp.GradScaler` 2.3, `custom_fwd(device_type=)` 2.4). The fix of a `GradScaler` construction "
        "is always unsafe: it builds the base class, and `isinstance(scaler, torch.cuda.amp.GradScaler)` tests "
        "in other modules (which one file cannot show; those in checked code are reported) turn False."
    )
    references = ("https://pytorch.org/docs/stable/amp.html",)
    torchfix_codes = ("TOR101",)
    catalog_ids = ("amp.cuda-autocast", "amp.cuda-gradscaler", "amp.custom-fwd-bwd")
    calls = watched_names("torch.cuda.amp", ("autocast", "GradScaler", "custom_fwd", "custom_bwd"))
    references_to = calls

    VALID = [
        'import torch\nwith torch.amp.autocast("cuda", dtype=torch.bfloat16):\n    y = model(x)\n',
        'import torch\nscaler = torch.amp.GradScaler("cuda")\n',
        'from torch import autocast\nwith autocast(device_type="cuda"):\n    pass\n',
        'from torch.amp import custom_fwd\n@custom_fwd(device_type="cuda", cast_inputs=None)\ndef forward(ctx, x):\n    return x\n',
        # Look-alikes: another library's amp, an attribute of self, a local function.
        'from apex import amp\nmodel, opt = amp.initialize(model, opt)\nwith amp.autocast():\n    pass\n',
        'import torch\nclass Trainer:\n    def step(self):\n        with self.amp.autocast():\n            pass\n',
        'import torch\ndef autocast(enabled=True):\n    return enabled\nwith autocast(False):\n    pass\n',
        'import torch\ndef run(torch):\n    return torch.cuda.amp.autocast()\n',
    ]
    INVALID = [
        Invalid('import torch\nwith torch.cuda.amp.autocast():\n    y = model(x)\n',
                fixed='import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    y = model(x)\n'),
        # Positional arguments change places: each one gets its name.
        Invalid('import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    y = model(x)\n',
                fixed='import torch\nwith torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16):\n    y = model(x)\n'),
        # The GradScaler constructions are unsafe fixes (the base class is built: type tests elsewhere see it).
        Invalid('from torch.cuda.amp import GradScaler, autocast\nscaler = GradScaler()\nwith autocast(enabled=use_amp):\n    loss = model(x)\n',
                fixed='import torch\nscaler = torch.amp.GradScaler("cuda")\nwith torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16):\n    loss = model(x)\n'),
        Invalid('import torch\nscaler = torch.cuda.amp.GradScaler(2.0**14, 2.0, enabled=use_amp)\n',
                fixed='import torch\nscaler = torch.amp.GradScaler("cuda", init_scale=2.0**14, growth_factor=2.0, enabled=use_amp)\n'),
        Invalid('import torch\nclass Scale(torch.autograd.Function):\n    @staticmethod\n'
                '    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n\n'
                '    @staticmethod\n    @torch.cuda.amp.custom_bwd\n    def backward(ctx, g):\n        return g\n',
                fixed='import torch\nclass Scale(torch.autograd.Function):\n    @staticmethod\n'
                '    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n\n'
                '    @staticmethod\n    @torch.amp.custom_bwd(device_type="cuda")\n    def backward(ctx, g):\n        return g\n'),
        # TorchFix writes ``amp.amp.autocast("cuda")`` here; the alias is dropped instead.
        Invalid('import torch.cuda.amp as amp\nwith amp.autocast():\n    pass\n',
                fixed='import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n'),
        Invalid('import torch as th\nfrom torch.cuda import amp\n\n@amp.autocast()\ndef forward(x):\n    return x\n',
                fixed='import torch as th\n\n@th.amp.autocast("cuda", dtype=th.float16)\ndef forward(x):\n    return x\n'),
        Invalid('from torch.cuda.amp import autocast as ac\nwith ac(\n    False,\n    cache_enabled=False,\n):\n    pass\n',
                fixed='import torch\nwith torch.amp.autocast(\n    "cuda",\n    enabled=False,\n    cache_enabled=False,\n    dtype=torch.float16,\n):\n    pass\n'),
        Invalid('from torch.cuda.amp import custom_fwd, custom_bwd\n\n@custom_fwd\ndef forward(ctx, x):\n    return x\n\n'
                '@custom_bwd\ndef backward(ctx, g):\n    return g\n',
                fixed='import torch\n\n@torch.amp.custom_fwd(device_type="cuda")\ndef forward(ctx, x):\n    return x\n\n'
                '@torch.amp.custom_bwd(device_type="cuda")\ndef backward(ctx, g):\n    return g\n'),
        Invalid('import torch\nscaler = torch.cuda.amp.GradScaler(*scaler_args)\n',
                fixed='import torch\nscaler = torch.amp.GradScaler("cuda", *scaler_args)\n'),
        # Unsafe: without a `dtype` in the mapping the new class inherits an enclosing autocast's dtype.
        Invalid('import torch\nctx = torch.cuda.amp.autocast(**amp_options)\n',
                fixed='import torch\nctx = torch.amp.autocast("cuda", **amp_options)\n'),
        # Not fixed: autocast's order changed, so *args cannot be mapped; a bare reference.
        Invalid('import torch\nctx = torch.cuda.amp.autocast(*args)\n'),
        Invalid('import torch\nmake_ctx = torch.cuda.amp.autocast if use_amp else contextlib.nullcontext\n'),
        Invalid('import torch\nok = isinstance(scaler, torch.cuda.amp.GradScaler)\n'),
        Invalid('import torch\nscaler = torch.cuda.amp.GradScaler()\n', min_torch="2.2",
                fixed='import torch\nscaler = torch.amp.GradScaler("cuda")\n'),
    ]
