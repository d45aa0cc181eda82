"""TP242: flex_attention's legacy `kernel_options={"FORCE_USE_FLEX_ATTENTION": True}` (`"BACKEND"` since 2.10)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import is_literal, keyword
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_LEGACY = "FORCE_USE_FLEX_ATTENTION"
_BACKEND = "BACKEND"


class FlexAttentionBackendOption(Rule):
    """
    ## What it does
    Flags `flex_attention(..., kernel_options={..., "FORCE_USE_FLEX_ATTENTION": True})` written
    as a dict literal in the call. Combined with `"BACKEND"` in the same dict it is an error from
    2.10 on; alone it is the legacy spelling, with an unsafe fix to `"BACKEND": "TRITON"`.

    ## Why is this bad?
    PyTorch 2.10 added `kernel_options["BACKEND"]` (`"AUTO"`, `"TRITON"`, `"FLASH"`,
    `"TRITON_DECODE"`; 2.9.1 has no such key) and calls the old knob legacy: `flex_attention`
    raises `RuntimeError: BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND
    supersedes the legacy knob` when both are given (2.10.0 … 2.15.0 wheels; the source keeps a
    "TODO: remove FORCE_USE_FLEX_ATTENTION once BACKEND is fully adopted"). The legacy knob only
    stopped Inductor from picking the flex-decoding kernel; under the default `"AUTO"` that is what
    `"TRITON"` selects (the Triton flex-attention kernel, never decoding, and FLASH only on request).
    """

    code = "TP242"
    name = "flex-attention-backend-option"
    summary = "flex_attention `kernel_options` `FORCE_USE_FLEX_ATTENTION` → `\"BACKEND\": \"TRITON\"` (2.10; both together raise)"
    changed_in = v("2.10")
    replacement_since = v("2.10")
    fix_safety = UNSAFE
    fix_safety_note = (
        "In the 2.10.0 … 2.15.0 wheels `FORCE_USE_FLEX_ATTENTION=True` under the default `BACKEND=\"AUTO\"` and "
        "`BACKEND=\"TRITON\"` both skip flex decoding and FLASH in Inductor's lowering, but FlexAttention's kernel "
        "options are API-unstable, so review the result; below 2.10 `BACKEND` is not read at all (the call may "
        "then pick the flex-decoding kernel)."
    )
    references = ("https://docs.pytorch.org/docs/stable/nn.attention.flex_attention.html",)
    catalog_ids = ("attn.flex-backend-option",)
    calls = frozenset({"torch.nn.attention.flex_attention.flex_attention"})

    VALID = [
        "from torch.nn.attention.flex_attention import flex_attention\n"
        "out = flex_attention(q, k, v, kernel_options={\"BACKEND\": \"TRITON\"})\n",
        # The legacy knob alone, before 2.10 (no BACKEND there).
        Valid("from torch.nn.attention.flex_attention import flex_attention\n"
              "out = flex_attention(q, k, v, kernel_options={\"FORCE_USE_FLEX_ATTENTION\": True})\n", target_torch="2.9"),
        "from torch.nn.attention.flex_attention import flex_attention\n"
        "out = flex_attention(q, k, v, kernel_options={\"BACKEND\": \"AUTO\", \"FORCE_USE_FLEX_ATTENTION\": False})\n",
        Valid("from torch.nn.attention.flex_attention import flex_attention\n"
              "out = flex_attention(q, k, v, kernel_options={\"BACKEND\": \"FLASH\", \"FORCE_USE_FLEX_ATTENTION\": True})\n",
              target_torch="2.9"),
    ]
    INVALID = [
        Invalid("from torch.nn.attention.flex_attention import flex_attention\n"
                "out = flex_attention(q, k, v, kernel_options={\"BACKEND\": \"FLASH\", \"FORCE_USE_FLEX_ATTENTION\": True})\n"),
        Invalid("import torch.nn.attention.flex_attention as fa\n"
                "out = fa.flex_attention(q, k, v, block_mask=mask, kernel_options={\"FORCE_USE_FLEX_ATTENTION\": True})\n",
                fixed="import torch.nn.attention.flex_attention as fa\n"
                      "out = fa.flex_attention(q, k, v, block_mask=mask, kernel_options={\"BACKEND\": \"TRITON\"})\n"),
    ]

    def check_call(self, ctx, call, qualname):
        options = keyword(call, "kernel_options")
        if options is None or not isinstance(options.value, ast.Dict):
            return
        entries = {key.value: (key, value) for key, value in zip(options.value.keys, options.value.values)
                   if isinstance(key, ast.Constant) and isinstance(key.value, str)}
        if _LEGACY not in entries:
            return
        key, value = entries[_LEGACY]
        if not is_literal(value, True):
            return
        if _BACKEND in entries:
            yield ctx.diagnostic(key, (
                f"`kernel_options` with both `BACKEND` and `{_LEGACY}=True` raises RuntimeError from PyTorch "
                f"{self.changed_in}: BACKEND supersedes the legacy knob; drop `{_LEGACY}`"))
            return
        fix = Fix(f'Use `"BACKEND": "TRITON"`{ctx.needs_note(self.replacement_since)}', [Edit(ctx.start(key), ctx.end(value), '"BACKEND": "TRITON"')], UNSAFE)
        yield ctx.diagnostic(key, (
            f"`kernel_options[\"{_LEGACY}\"]` is the legacy knob since PyTorch {self.changed_in}; "
            "use `\"BACKEND\": \"TRITON\"`"), fix)
