"""TP220: create_block_mask(..., _compile=True) is deprecated; compile the function instead."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import argument, has_star_args, is_literal, remove_argument
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device, BLOCK_SIZE, _compile): the 8th positional.
_COMPILE_POSITION = 7


class CreateBlockMaskCompileFlag(Rule):
    """
    ## What it does
    Flags the private `_compile=` argument of
    `torch.nn.attention.flex_attention.create_block_mask`. `_compile=True` is rewritten to
    `torch.compile(create_block_mask)(...)`; `_compile=False` (the default) is dropped.

    ## Why is this bad?
    The flag was a workaround for a `torch.compile` limitation in early FlexAttention. Since PyTorch
    2.6, `_compile=True` raises a `DeprecationWarning` ("to compile create_block_mask, we suggest
    doing torch.compile(create_block_mask) ... will be removed in the future") and does nothing but
    `return torch.compile(create_block_mask)(mask_mod, B, H, Q_LEN, KV_LEN, device, BLOCK_SIZE)`,
    so the rewrite is exactly what the flag does on 2.6 and later. Some guides say the opposite
    ("do not wrap it in `torch.compile`, use `_compile=True`"); that advice is stale since 2.6.
    """

    code = "TP220"
    name = "create-block-mask-compile-flag"
    summary = "`create_block_mask(..., _compile=True)` → `torch.compile(create_block_mask)(...)` (deprecated in 2.6)"
    deprecated_in = v("2.6")
    replacement_since = v("2.6")
    fix_safety = SAFE
    fix_safety_note = (
        "From 2.6 the flag only calls `torch.compile(create_block_mask)` with the same arguments, so the "
        "rewrite is identical there. Before 2.6 `_compile=True` compiled only the mask's internals and "
        "compiling the whole function was not supported, so the fix is unsafe when your minimum is older."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/nn.attention.flex_attention.html",
    )
    catalog_ids = ("attn.block-mask-compile-flag",)
    calls = frozenset({"torch.nn.attention.flex_attention.create_block_mask"})

    VALID = [
        "import torch\nfrom torch.nn.attention.flex_attention import create_block_mask\n"
        "mask = torch.compile(create_block_mask)(causal, None, None, 128, 128, device=\"cpu\")\n",
        "from torch.nn.attention.flex_attention import create_block_mask\n"
        "mask = create_block_mask(causal, 1, 1, 128, 128, device=\"cuda\")\n",
        # Look-alikes: another library's function and a local definition.
        "import torch\nfrom mylib.masks import create_block_mask\nmask = create_block_mask(causal, device=\"cpu\", _compile=True)\n",
        "import torch\ndef create_block_mask(*args, _compile=False):\n    return args\n"
        "mask = create_block_mask(causal, device=\"cpu\", _compile=True)\n",
        "import torch\nmask = self.create_block_mask(causal, _compile=True)\n",
    ]
    INVALID = [
        Invalid(
            "from torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, None, None, 128, 128, device=\"cpu\", _compile=True)\n",
            fixed="from torch.nn.attention.flex_attention import create_block_mask\nimport torch\n"
            "mask = torch.compile(create_block_mask)(causal, None, None, 128, 128, device=\"cpu\")\n",
        ),
        Invalid(
            "import torch as th\nfrom torch.nn.attention import flex_attention as fa\n"
            "mask = fa.create_block_mask(causal, B, H, S, S, device=dev, _compile=True)\n",
            fixed="import torch as th\nfrom torch.nn.attention import flex_attention as fa\n"
            "mask = th.compile(fa.create_block_mask)(causal, B, H, S, S, device=dev)\n",
            min_torch="2.6",
        ),
        Invalid(
            "import torch\nfrom torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, 1, 1, 128, 128, \"cuda\", 128, True)\n",
            fixed="import torch\nfrom torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = torch.compile(create_block_mask)(causal, 1, 1, 128, 128, \"cuda\", 128)\n",
        ),
        Invalid(
            "from torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, 1, 1, 128, 128, device=\"cpu\", _compile=False)\n",
            fixed="from torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, 1, 1, 128, 128, device=\"cpu\")\n",
        ),
        # Not a literal, or positional arguments after it: reported without a fix.
        Invalid(
            "from torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, 1, 1, 128, 128, \"cpu\", 128, True, False)\n",
        ),
        Invalid(
            "from torch.nn.attention.flex_attention import create_block_mask\n"
            "mask = create_block_mask(causal, 1, 1, 128, 128, device=\"cpu\", _compile=use_compile)\n",
        ),
    ]

    def check_call(self, ctx, call, qualname):
        found = argument(call, "_compile", _COMPILE_POSITION)
        if found is None:
            return
        node, value = found
        phrase = self.version_phrase(ctx.target)
        # Removing a positional ``_compile`` shifts later positional arguments (2.13 has three more).
        removable = isinstance(node, ast.keyword) or len(call.args) == _COMPILE_POSITION + 1
        if is_literal(value, False):
            message = f"`create_block_mask(..., _compile=False)`: the private flag is {phrase}; drop it (False is the default)"
            fix = None
            if removable:
                fix = Fix(message="Drop `_compile=False` (the default)", edits=[remove_argument(ctx, call, node)],
                          applicability=SAFE)
            yield ctx.diagnostic(node, message, fix)
            return
        message = (
            f"`create_block_mask(..., _compile=...)` is {phrase} (DeprecationWarning); "
            f"call `torch.compile(create_block_mask)(...)` instead"
        )
        fix = None
        if is_literal(value, True) and removable and not has_star_args(call):
            compile_text, import_edits = ctx.name_for("torch.compile")
            wrapped = f"{compile_text}({ctx.source(call.func)})"
            fix = Fix(
                message=f"Call `torch.compile(create_block_mask)(...)` without `_compile`{ctx.needs_note(self.replacement_since)}",
                edits=[*import_edits, Edit(ctx.start(call.func), ctx.end(call.func), wrapped),
                       remove_argument(ctx, call, node)],
                applicability=ctx.applicability(needs=self.replacement_since),
            )
        yield ctx.diagnostic(node, message, fix)
