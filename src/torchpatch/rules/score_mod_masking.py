"""TP510 (opt-in): a flex_attention `score_mod` that masks with -inf and no `block_mask`: every block is computed."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import argument
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

_FLEX = "torch.nn.attention.flex_attention.flex_attention"
#: ``flex_attention(query, key, value, score_mod=None, block_mask=None, ...)`` in 2.5 … 2.15.
_SCORE_MOD, _BLOCK_MASK = 3, 4


def _is_minus_infinity(node: ast.AST) -> bool:
    """``float("-inf")``, ``-float("inf")``, ``-math.inf`` / ``-torch.inf`` / ``-np.inf``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and node.args[0].value.strip().lower() in ("-inf", "-infinity"):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = node.operand
        if isinstance(operand, ast.Attribute) and operand.attr == "inf" and isinstance(operand.value, ast.Name):
            return True
        if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Name) and operand.func.id == "float" \
                and len(operand.args) == 1 and isinstance(operand.args[0], ast.Constant) \
                and isinstance(operand.args[0].value, str) and operand.args[0].value.strip().lower() in ("inf", "infinity"):
            return True
    return False


def _returned_expressions(function: ast.AST) -> list[ast.expr]:
    if isinstance(function, ast.Lambda):
        return [function.body]
    found: list[ast.expr] = []
    pending = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # a nested function's returns are not the score_mod's
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _masks_with_minus_infinity(function: ast.AST) -> bool:
    return any(_is_minus_infinity(node) for value in _returned_expressions(function) for node in ast.walk(value))


class ScoreModMasking(Rule):
    """
    ## What it does
    Flags `flex_attention(q, k, v, score_mod=fn)` calls without a `block_mask` where `fn` (a
    function or lambda defined in the same file) returns `-inf` (`float("-inf")`, `-math.inf`,
    `-torch.inf`, ...) for some scores, that is, where the score modification is really a mask.

    ## Why is this bad?
    A `score_mod` runs on every score: with `block_mask=None`, `flex_attention` builds a dense
    block mask (`_create_empty_block_mask`: one block covering the whole query and key length, src
    2.5 … 2.15), so each block of the attention matrix is computed and then thrown away where the
    function returned `-inf`. The result is correct, but a causal, sliding-window or document mask
    written this way does all of the work that FlexAttention exists to skip. Write the condition
    as a `mask_mod(b, h, q_idx, kv_idx) -> bool`, build the mask once with
    `create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=...)` and pass `block_mask=`: fully
    masked blocks are skipped, and the mask can be reused as long as its sparsity does not change.
    Keep `score_mod` for changes of value (biases, soft-capping). Opt-in: the code is correct, only
    slow.
    """

    code = "TP510"
    opt_in = True
    name = "score-mod-masking"
    summary = "flex_attention `score_mod` returning -inf with no `block_mask`: no block is skipped; use `mask_mod` + `BlockMask` (opt-in)"
    changed_in = v("2.5")
    references = (
        "https://docs.pytorch.org/docs/stable/nn.attention.flex_attention.html",
        "https://pytorch.org/blog/flexattention/",
    )
    catalog_ids = ("attn.score-mod-vs-block-mask",)
    calls = frozenset({_FLEX})

    VALID = [
        "from torch.nn.attention.flex_attention import create_block_mask, flex_attention\n\n"
        "def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n\n"
        "mask = create_block_mask(causal, None, None, S, S, device=q.device)\nout = flex_attention(q, k, v, block_mask=mask)\n",
        # A score_mod that changes values, not a mask.
        "import torch\nfrom torch.nn.attention.flex_attention import flex_attention\n\n"
        "def softcap(score, b, h, q_idx, kv_idx):\n    return 30 * torch.tanh(score / 30)\n\n"
        "out = flex_attention(q, k, v, score_mod=softcap)\n",
        # The block mask skips the masked blocks already.
        "from torch.nn.attention.flex_attention import flex_attention\n"
        "out = flex_attention(q, k, v, lambda s, b, h, qi, ki: s.masked_fill(qi < ki, float('-inf')), mask)\n",
    ]
    INVALID = [
        Invalid("import torch\nfrom torch.nn.attention.flex_attention import flex_attention\n\n"
                "def causal(score, b, h, q_idx, kv_idx):\n"
                "    return torch.where(q_idx >= kv_idx, score, -float(\"inf\"))\n\n"
                "out = flex_attention(q, k, v, score_mod=causal)\n"),
        Invalid("import math\nimport torch.nn.attention.flex_attention as fa\n"
                "out = fa.flex_attention(q, k, v, lambda s, b, h, qi, ki: s if qi >= ki else -math.inf)\n"),
        Invalid("import torch\nfrom torch.nn.attention.flex_attention import flex_attention\n\n"
                "class Attention(torch.nn.Module):\n    def forward(self, q, k, v):\n"
                "        def window(score, b, h, q_idx, kv_idx):\n"
                "            return torch.where((q_idx - kv_idx).abs() <= 256, score, float(\"-inf\"))\n"
                "        return flex_attention(q, k, v, score_mod=window, block_mask=None)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        block_mask = argument(call, "block_mask", _BLOCK_MASK)
        if block_mask is not None and not (isinstance(block_mask[1], ast.Constant) and block_mask[1].value is None):
            return
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
            return
        score_mod = argument(call, "score_mod", _SCORE_MOD)
        if score_mod is None:
            return
        function = _definition(ctx, score_mod[1])
        if function is None or not _masks_with_minus_infinity(function):
            return
        label = f"`{score_mod[1].id}`" if isinstance(score_mod[1], ast.Name) else "the lambda"
        message = (f"`score_mod` {label} masks with -inf and no `block_mask` is given: flex_attention (PyTorch "
                   f"{self.changed_in}+) computes every block; write the condition as a `mask_mod` and pass "
                   f"`block_mask=create_block_mask(mask_mod, ...)` so masked blocks are skipped")
        yield ctx.diagnostic(score_mod[1], message)


def _definition(ctx, node: ast.expr) -> ast.AST | None:
    """The function or lambda a score_mod argument is, when the file defines it."""
    if isinstance(node, ast.Lambda):
        return node
    if not isinstance(node, ast.Name):
        return None
    binding = ctx.scopes.binding_for(node.id, ctx.scope, (node.lineno, node.col_offset))
    if binding is None or binding.qualname is not None or binding.alias_of is not None or binding.conditional:
        return None
    for candidate in ast.walk(ctx.tree):
        if not isinstance(candidate, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign)) \
                or (candidate.end_lineno, candidate.end_col_offset) != binding.position:
            continue
        if isinstance(candidate, (ast.FunctionDef, ast.AsyncFunctionDef)) and candidate.name == node.id:
            return candidate
        if isinstance(candidate, ast.Assign) and isinstance(candidate.value, ast.Lambda) \
                and any(isinstance(t, ast.Name) and t.id == node.id for t in candidate.targets):
            return candidate.value
    return None
