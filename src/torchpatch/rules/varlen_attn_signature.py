"""TP110: varlen_attn lost is_causal and its positional optionals in PyTorch 2.11."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args, is_literal, keyword, remove_argument
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, ...): 7 positional parameters.
_REQUIRED = 7
#: What followed ``max_k`` in 2.10 (src 2.10 torch/nn/attention/varlen.py), in order.
_OPTIONALS_2_10 = ("is_causal", "return_aux")
_CAUSAL_WINDOW = "(-1, 0)"


class VarlenAttnSignature(Rule):
    """
    ## What it does
    Flags `torch.nn.attention.varlen.varlen_attn` calls written for its 2.10 signature: an
    `is_causal=` argument, or optional arguments passed by position after `max_k`. The fix turns
    `is_causal=True` into `window_size=(-1, 0)`, drops `is_causal=False`, and passes the 2.10
    positional optionals (`is_causal`, `return_aux`) by keyword.

    ## Why is this bad?
    `varlen_attn` appeared in PyTorch 2.10 as
    `varlen_attn(q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, is_causal=False, return_aux=None)`.
    In 2.11 `is_causal` was replaced by a sliding-window argument, `window_size=(left, right)`
    (default `(-1, -1)`, full attention; `(-1, 0)` is causal, `(W, 0)` a causal sliding window), and
    every argument after `max_k` became keyword-only (`return_aux`, `scale`, `window_size`, later
    `enable_gqa`, `seqused_k`, `block_table`, `num_splits`). A 2.10 call that passes `is_causal` or an
    eighth positional argument raises `TypeError` from 2.11 on. The API is marked unstable, so pin
    the torch release you test with.
    """

    code = "TP110"
    name = "varlen-attn-signature"
    summary = "`varlen_attn(..., is_causal=...)` → `window_size=(-1, 0)`; optionals keyword-only (2.11)"
    removed_in = v("2.11")
    replacement_since = v("2.11")
    fix_safety = SAFE
    fix_safety_note = (
        "`window_size` does not exist in 2.10, so a fix that adds it is unsafe when your minimum torch is "
        "2.10; dropping `is_causal=False` and passing `return_aux` by keyword work on 2.10 too."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/nn.attention.varlen.html",
    )
    catalog_ids = ("attn.varlen-signature-2.11",)
    calls = frozenset({"torch.nn.attention.varlen.varlen_attn"})

    VALID = [
        "from torch.nn.attention.varlen import varlen_attn\n"
        "out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, window_size=(-1, 0))\n",
        "from torch.nn.attention.varlen import varlen_attn\nout = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k)\n",
        Valid("from torch.nn.attention.varlen import varlen_attn\n"
              "out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, is_causal=True)\n", target_torch="2.10"),
        # Look-alikes: another library's varlen_attn, a method and a local definition.
        "import torch\nfrom flash_attn import varlen_attn\nout = varlen_attn(q, k, v, cu, cu, m, m, is_causal=True)\n",
        "import torch\nout = self.varlen_attn(q, k, v, cu, cu, m, m, True)\n",
        "import torch\ndef varlen_attn(*args, is_causal=False):\n    return args\nvarlen_attn(q, is_causal=True)\n",
    ]
    INVALID = [
        Invalid(
            "from torch.nn.attention.varlen import varlen_attn\n"
            "out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, is_causal=True)\n",
            fixed="from torch.nn.attention.varlen import varlen_attn\n"
            "out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, window_size=(-1, 0))\n",
        ),
        Invalid(
            "import torch.nn.attention.varlen as varlen\n"
            "out = varlen.varlen_attn(q, k, v, cu, cu, m, m, is_causal=False)\n",
            fixed="import torch.nn.attention.varlen as varlen\n"
            "out = varlen.varlen_attn(q, k, v, cu, cu, m, m)\n",
        ),
        Invalid(
            "from torch.nn.attention import varlen\n"
            "out, lse = varlen.varlen_attn(q, k, v, cu, cu, m, m, True, varlen.AuxRequest(lse=True))\n",
            fixed="from torch.nn.attention import varlen\n"
            "out, lse = varlen.varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0), return_aux=varlen.AuxRequest(lse=True))\n",
        ),
        Invalid(
            "from torch.nn.attention.varlen import varlen_attn as attn\n"
            "out = attn(q, k, v, cu, cu, m, m, False)\n",
            fixed="from torch.nn.attention.varlen import varlen_attn as attn\n"
            "out = attn(q, k, v, cu, cu, m, m)\n",
        ),
        # A non-literal flag: reported without a fix.
        Invalid(
            "from torch.nn.attention.varlen import varlen_attn\n"
            "out = varlen_attn(q, k, v, cu, cu, m, m, is_causal=causal)\n",
        ),
    ]

    def check_call(self, ctx, call, qualname):
        if has_star_args(call) and keyword(call, "is_causal") is None:
            return  # positions unknown
        causal = keyword(call, "is_causal")
        extra = [] if has_star_args(call) else call.args[_REQUIRED:]
        if causal is None and not extra:
            return
        phrase = self.version_phrase(ctx.target)
        if causal is not None:
            node = causal
            message = (f"`varlen_attn(..., is_causal=...)`: `is_causal` was {phrase} (TypeError); "
                       f"pass `window_size=(-1, 0)` for causal attention")
        else:
            node = extra[0]
            message = (f"`varlen_attn` arguments after `max_k` are keyword-only since PyTorch {self.removed_in} "
                       f"(TypeError); the 8th positional argument was `is_causal` in 2.10")
        yield ctx.diagnostic(node, message, self._fix(ctx, call, causal, extra))

    def _fix(self, ctx, call: ast.Call, causal: ast.keyword | None, extra: list[ast.expr]) -> Fix | None:
        if has_star_args(call) or keyword(call, "window_size") is not None:
            return None
        if causal is not None and extra or len(extra) > len(_OPTIONALS_2_10):
            return None  # already a TypeError on 2.10
        needs = None
        if causal is not None:
            if is_literal(causal.value, True):
                edits = [Edit(ctx.start(causal), ctx.end(causal), f"window_size={_CAUSAL_WINDOW}")]
                needs = self.replacement_since
            elif is_literal(causal.value, False):
                edits = [remove_argument(ctx, call, causal)]
            else:
                return None
        else:
            pieces = []
            for name, node in zip(_OPTIONALS_2_10, extra):
                if name == "is_causal":
                    if is_literal(node, True):
                        pieces.append(f"window_size={_CAUSAL_WINDOW}")
                        needs = self.replacement_since
                    elif not is_literal(node, False):
                        return None
                else:
                    pieces.append(f"{name}={ctx.source(node)}")
            if pieces:
                edits = [Edit(ctx.start(extra[0]), ctx.end(extra[-1]), ", ".join(pieces))]
            else:
                edits = [remove_argument(ctx, call, extra[0])]
        described = "Use `window_size=(-1, 0)`" if needs else "Drop `is_causal=False`"
        if extra:
            described += " and pass the optional arguments by keyword"
        return Fix(message=f"{described}{ctx.needs_note(needs)}", edits=edits,
                   applicability=ctx.applicability(needs=needs))
