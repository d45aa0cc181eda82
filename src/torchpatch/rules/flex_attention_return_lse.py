"""TP221: flex_attention(..., return_lse=True) is deprecated in favour of return_aux=AuxRequest(lse=True)."""

from __future__ import annotations

import ast
import re

from torchpatch.rules._helpers import argument, has_star_args, is_literal, keyword
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: flex_attention(query, key, value, score_mod, block_mask, scale, enable_gqa, return_lse, ...)
_RETURN_LSE_POSITION = 7


class FlexAttentionReturnLse(Rule):
    """
    ## What it does
    Flags `flex_attention(..., return_lse=True)`. For the statement form
    `out, lse = flex_attention(..., return_lse=True)` the fix passes
    `return_aux=AuxRequest(lse=True)`, unpacks `out, aux = ...` and adds `lse = aux.lse` on the next
    line; other forms are reported without a fix.

    ## Why is this bad?
    PyTorch 2.9 added `return_aux=AuxRequest(lse=..., max_scores=...)`, which returns
    `(output, AuxOutput)`, and deprecated `return_lse` with a `FutureWarning` ("return_lse is
    deprecated and will be removed in v2.10"). It was still accepted in 2.15, but passing both raises
    `ValueError`, and code that still relies on the flag will break when it goes. The return value
    changes shape (a named tuple instead of the bare log-sum-exp tensor), so the rewrite is only made
    where the result is unpacked into two names.
    """

    code = "TP221"
    name = "flex-attention-return-lse"
    summary = "`flex_attention(..., return_lse=True)` → `return_aux=AuxRequest(lse=True)` (deprecated in 2.9)"
    deprecated_in = v("2.9")
    replacement_since = v("2.9")
    fix_safety = UNSAFE
    fix_safety_note = (
        "The second returned value becomes an `AuxOutput` named tuple, so the fix renames it and reads "
        "`.lse` on a new line; it is only offered for `out, lse = flex_attention(...)` and is unsafe: "
        "review that the new name `aux` does not change other code. `AuxRequest` needs PyTorch 2.9."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/nn.attention.flex_attention.html",
    )
    catalog_ids = ("attn.flex-return-lse",)
    calls = frozenset({"torch.nn.attention.flex_attention.flex_attention"})

    VALID = [
        "from torch.nn.attention.flex_attention import AuxRequest, flex_attention\n"
        "out, aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))\nlse = aux.lse\n",
        "from torch.nn.attention.flex_attention import flex_attention\nout = flex_attention(q, k, v)\n",
        "from torch.nn.attention.flex_attention import flex_attention\n"
        "out = flex_attention(q, k, v, return_lse=False)\n",
        # Look-alikes: another library's flex_attention and a method.
        "import torch\nfrom mylib.attention import flex_attention\n"
        "out, lse = flex_attention(q, k, v, return_lse=True)\n",
        "import torch\nout, lse = self.flex_attention(q, k, v, return_lse=True)\n",
    ]
    INVALID = [
        Invalid(
            "from torch.nn.attention.flex_attention import flex_attention\n"
            "out, lse = flex_attention(q, k, v, return_lse=True)\n",
            fixed="from torch.nn.attention.flex_attention import flex_attention\n"
            "from torch.nn.attention.flex_attention import AuxRequest\n"
            "out, aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))\nlse = aux.lse\n",
        ),
        Invalid(
            "import torch.nn.attention.flex_attention as fa\n"
            "def attend(q, k, v, aux):\n"
            "    o, l = fa.flex_attention(q, k, v, block_mask=mask, return_lse=True)  # keep the lse\n"
            "    return o, l, aux\n",
            fixed="import torch.nn.attention.flex_attention as fa\n"
            "def attend(q, k, v, aux):\n"
            "    o, flex_aux = fa.flex_attention(q, k, v, block_mask=mask, return_aux=fa.AuxRequest(lse=True))  # keep the lse\n"
            "    l = flex_aux.lse\n"
            "    return o, l, aux\n",
        ),
        # Not the two-name unpacking: reported without a fix.
        Invalid(
            "from torch.nn.attention.flex_attention import flex_attention\n"
            "result = flex_attention(q, k, v, return_lse=True)\n",
        ),
        Invalid(
            "from torch.nn.attention import flex_attention\n"
            "out, lse = flex_attention.flex_attention(q, k, v, None, None, None, False, True)\n",
        ),
    ]

    def check_call(self, ctx, call, qualname):
        found = argument(call, "return_lse", _RETURN_LSE_POSITION)
        if found is None:
            return
        node, value = found
        if is_literal(value, False):
            return  # the default: no warning
        message = (
            f"`flex_attention(..., return_lse=...)` is {self.version_phrase(ctx.target)} (FutureWarning); "
            f"pass `return_aux=AuxRequest(lse=True)` and read `.lse` from the second result"
        )
        fix = None
        if isinstance(node, ast.keyword) and is_literal(value, True):
            fix = self._fix(ctx, call, node)
        yield ctx.diagnostic(node, message, fix)

    def _fix(self, ctx, call: ast.Call, argument: ast.keyword) -> Fix | None:
        statement = ctx.statement
        if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
            return None
        target = statement.targets[0]
        if not (isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2
                and all(isinstance(element, ast.Name) for element in target.elts)):
            return None
        if keyword(call, "return_aux") is not None or has_star_args(call):
            return None
        text = ctx.text
        start = ctx.start(statement)
        line_start = text.rfind("\n", 0, start) + 1
        indent = text[line_start:start]
        if indent.strip():
            return None  # shares its line with other code (``if x: out, lse = ...``)
        end = ctx.end(statement)
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        if line_end > end and text[line_end - 1] == "\r":
            line_end -= 1
        rest = text[end:line_end].strip()
        if rest and not rest.startswith("#"):
            return None  # ``; more code`` after the statement
        newline = "\r\n" if "\r\n" in text else "\n"
        aux = _free_name(text)
        lse_name = target.elts[1].id
        request, import_edits = ctx.name_for("torch.nn.attention.flex_attention.AuxRequest")
        edits = [
            *import_edits,
            Edit(ctx.start(target.elts[1]), ctx.end(target.elts[1]), aux),
            Edit(ctx.start(argument), ctx.end(argument), f"return_aux={request}(lse=True)"),
            Edit(line_end, line_end, f"{newline}{indent}{lse_name} = {aux}.lse"),
        ]
        return Fix(
            message=f"Pass `return_aux=AuxRequest(lse=True)` and read `{aux}.lse`{ctx.needs_note(self.replacement_since)}",
            edits=edits,
            applicability=UNSAFE,
        )


def _free_name(text: str) -> str:
    """``aux`` unless the file already uses that word, then ``flex_aux``, ``flex_aux2``, …"""
    for candidate in ("aux", "flex_aux", *(f"flex_aux{n}" for n in range(2, 100))):
        if not re.search(rf"\b{candidate}\b", text):
            return candidate
    return "flex_aux_output"
