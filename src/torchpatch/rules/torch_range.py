"""TP250: torch.range (end-inclusive, deprecated) -> torch.arange, fixed only where the result is provably equal."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args, keyword, literal, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule
from torchpatch.versions import v

#: Integer bounds up to this size are exact in float32 (the default dtype), so both functions agree.
_EXACT = 2 ** 24


def _int_literal(node: ast.AST) -> int | None:
    if not isinstance(node, (ast.Constant, ast.UnaryOp)):
        return None
    try:
        value = literal(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if type(value) is int else None


class TorchRange(Rule):
    """
    ## What it does
    Flags calls to `torch.range(start, end, step)` and, where every bound is an integer literal,
    rewrites them to the `torch.arange` call that returns the same tensor.

    ## Why is this bad?
    `torch.range` has warned since PyTorch 0.4 ("torch.range is deprecated and will be removed in a
    future release because its behavior is inconsistent with Python's range builtin", a
    `UserWarning`; still shipped in 2.15). It includes `end`, unlike Python's `range` and
    `torch.arange`, and it always returns the default floating dtype, even for integer arguments.

    The fix therefore is not a rename: `torch.range(1, 10, 2)` is `[1., 3., 5., 7., 9.]`, and
    `torch.arange(1, 10, 2)` drops nothing here but `torch.arange(1, 12, 2)` (TorchFix's rewrite,
    `end + step`) adds `11.`. With integer literals the fix moves `end` by one towards the step
    (`end + 1`, or `end - 1` for a negative step), which keeps exactly the same elements, and writes
    it as a float (`11.0`) so that `arange` returns the default floating dtype as `range` did (unless
    you pass `dtype=`). Non-literal or floating bounds are reported without a fix: the inclusive end
    of a floating range cannot be moved exactly.
    """

    code = "TP250"
    name = "torch-range"
    summary = "`torch.range` (end-inclusive, deprecated since 0.4) -> `torch.arange` with the exact end"
    deprecated_in = v("0.4")
    fix_safety = SAFE
    fix_safety_note = (
        "Only integer-literal bounds are rewritten, with `end` moved by one towards the step and written as a "
        "float, so the values and the dtype are those of `torch.range`."
    )
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.range.html",)
    torchfix_codes = ("TOR101", "TOR103")
    calls = frozenset({"torch.range"})

    VALID = [
        "import torch\nx = torch.arange(1, 11)\n",
        "import torch\nfor i in range(10):\n    pass\n",
        # Look-alikes: the builtin, a local range, another library's range.
        "import torch\nimport numpy as np\nx = np.arange(1, 10)\nr = range(1, 10, 2)\n",
        "import torch\ndef range(a, b):\n    return a\nx = range(1, 10)\n",
        "import torch\nimport tensorflow as tf\nx = tf.range(1, 10)\n",
    ]
    INVALID = [
        Invalid("import torch\nx = torch.range(1, 10, 2)\n", fixed="import torch\nx = torch.arange(1, 11.0, 2)\n"),
        Invalid("import torch as th\nx = th.range(0, 4)\n", fixed="import torch as th\nx = th.arange(0, 5.0)\n"),
        Invalid("import torch\nx = torch.range(10, 0, -3, dtype=torch.int64)\n",
                fixed="import torch\nx = torch.arange(10, -1, -3, dtype=torch.int64)\n"),
        Invalid("from torch import range as trange\nx = trange(-5, -1)\n",
                fixed="import torch\nx = torch.arange(-5, 0.0)\n"),
        Invalid("import torch\nx = torch.range(0, 1, 0.1)\n"),
        Invalid("import torch\nx = torch.range(start, end)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        message = ("`torch.range` is deprecated since PyTorch 0.4 (UserWarning, still shipped in 2.15) and includes `end`; "
                   "use `torch.arange`, which excludes it")
        yield ctx.diagnostic(call, message, self._fix(ctx, call))

    def _fix(self, ctx, call):
        if has_star_args(call) or len(call.args) not in (2, 3) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            return None
        if any(keyword(call, name) is not None for name in ("start", "end", "step")):
            return None
        values = [_int_literal(arg) for arg in call.args]
        if any(value is None or abs(value) > _EXACT for value in values):
            return None
        end = values[1]
        step = values[2] if len(values) == 3 else 1
        if step == 0:
            return None
        new_end = end + 1 if step > 0 else end - 1
        end_text = str(new_end) if keyword(call, "dtype") is not None else f"{new_end}.0"
        name, import_edits = ctx.name_for("torch.arange")
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        edits = [*import_edits, replace_node(ctx, call.func, name), replace_node(ctx, call.args[1], end_text)]
        return Fix(message=f"Replace with `torch.arange(..., {end_text}, ...)` (same elements and dtype)",
                   edits=edits, applicability=SAFE, obsolete_names=(root.id,))
