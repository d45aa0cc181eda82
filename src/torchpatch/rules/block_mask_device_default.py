"""TP432: create_block_mask / create_mask without device= (the default changed from "cuda" in PyTorch 2.10)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import add_keyword, has_double_star, keyword
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: ``create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device, ...)`` and ``create_mask(mod_fn, B, H, Q_LEN, KV_LEN,
#: device)``: ``device`` is the sixth parameter in 2.5–2.15 (src 2.5, 2.9, 2.10, 2.14 flex_attention.py).
_DEVICE_POSITION = 5
_MODULE = "torch.nn.attention.flex_attention"


class BlockMaskDeviceDefault(Rule):
    """
    ## What it does
    Flags `torch.nn.attention.flex_attention.create_block_mask(...)` and `create_mask(...)` calls
    that do not pass `device=`, when the code must also run on releases before 2.10 (your minimum
    torch is below 2.10).

    ## Why is this bad?
    Up to PyTorch 2.9 both functions declared `device="cuda"`. Since 2.10 the default is `None`,
    meaning `torch.accelerator.current_accelerator()` or the CPU when there is none. The same call
    builds the mask on CUDA on 2.5–2.9 and on the current accelerator (XPU, MPS, ...) or the CPU on
    2.10+; without a GPU it fails on the old releases and silently works on the new ones. A mask
    must live on the device of the query, key and value it is used with, so say where it goes:
    `device=query.device` is right on every release.

    The fix adds `device="cuda"`, which is what 2.5–2.9 used; it is unsafe, because on 2.10+ it
    pins CUDA where the default would follow the current accelerator.

    ## Which working code changes behaviour
    None that ran before 2.10: such code ran on CUDA (the old default), and on a CUDA machine 2.10+
    picks CUDA as the current accelerator too. Only code that never ran before (no GPU) or machines
    with another accelerator see a difference, so the rule is opt-in.
    """

    code = "TP432"
    opt_in = True
    name = "block-mask-device-default"
    summary = "`create_block_mask`/`create_mask` without `device=` (default `\"cuda\"` became the current accelerator in 2.10)"
    changed_in = v("2.10")
    replacement_since = v("2.5")
    fix_safety = UNSAFE
    fix_safety_note = (
        "`device=\"cuda\"` keeps the 2.5–2.9 behaviour everywhere but pins CUDA on 2.10+, where the default follows "
        "the current accelerator (or the CPU). Prefer the device of your query tensor, e.g. `device=query.device`."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/nn.attention.flex_attention.html",
    )
    catalog_ids = ("attn.block-mask-device-default",)
    calls = frozenset(f"{_MODULE}.{name}" for name in ("create_block_mask", "create_mask"))

    VALID = [
        "from torch.nn.attention.flex_attention import create_block_mask\n"
        "mask = create_block_mask(causal, 1, 1, 128, 128, device=q.device)\n",
        "from torch.nn.attention.flex_attention import create_mask\nm = create_mask(causal, 1, 1, 64, 64, \"cpu\")\n",
        Valid("from torch.nn.attention.flex_attention import create_block_mask\n"
              "mask = create_block_mask(causal, 1, 1, 128, 128)\n", min_torch="2.10"),
        "from torch.nn.attention.flex_attention import create_block_mask\nmask = create_block_mask(*shape, **opts)\n",
        # Look-alikes: another library's helper, a method.
        "import torch\nfrom attn_gym.masks import create_block_mask\nmask = create_block_mask(causal, 1, 1, 8, 8)\n",
        "import torch\nclass M:\n    def f(self):\n        return self.create_mask(causal, 1, 1, 8, 8)\n",
    ]
    INVALID = [
        Invalid("from torch.nn.attention.flex_attention import create_block_mask\n"
                "mask = create_block_mask(causal, None, None, 1024, 1024)\n",
                fixed="from torch.nn.attention.flex_attention import create_block_mask\n"
                      "mask = create_block_mask(causal, None, None, 1024, 1024, device=\"cuda\")\n"),
        Invalid("from torch.nn.attention import flex_attention as fa\n"
                "mask = fa.create_mask(causal, B, H, S, S)\n",
                fixed="from torch.nn.attention import flex_attention as fa\n"
                      "mask = fa.create_mask(causal, B, H, S, S, device=\"cuda\")\n"),
        Invalid("import torch\nblock = torch.nn.attention.flex_attention.create_block_mask(causal, B, H, S, S, BLOCK_SIZE=64)\n",
                fixed="import torch\nblock = torch.nn.attention.flex_attention.create_block_mask(causal, B, H, S, S, BLOCK_SIZE=64, device=\"cuda\")\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.min_torch >= self.changed_in:
            return  # the code only runs where the default follows the current accelerator
        if keyword(call, "device") is not None or has_double_star(call):
            return
        if any(isinstance(argument, ast.Starred) for argument in call.args) or len(call.args) > _DEVICE_POSITION:
            return  # passed positionally (or maybe, through *args)
        function = qualname.rpartition(".")[2]
        message = (f"`{function}` without `device=`: the default was \"cuda\" before PyTorch {self.changed_in} and is the "
                   f"current accelerator (or CPU) since; your minimum is {ctx.min_torch}: pass `device=query.device`")
        fix = Fix(message="Pass `device=\"cuda\"` (the 2.5–2.9 default; pins CUDA on 2.10+)",
                  edits=[add_keyword(ctx, call, 'device="cuda"')], applicability=UNSAFE)
        yield ctx.diagnostic(call.func, message, fix)
