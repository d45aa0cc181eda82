"""TP900 (opt-in): torch.log(1 + x) -> torch.log1p(x)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v


def is_one(node: ast.AST) -> bool:
    """The literal 1 or 1.0 (not True)."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


class TorchLog1p(Rule):
    """
    ## What it does
    Flags `torch.log(1 + x)` and `torch.log(x + 1)` and rewrites them to `torch.log1p(x)`. Opt-in:
    enable it with `--extend-select TP900` (or `--select TOR106`).

    ## Why is this bad?
    For small `|x|`, `1 + x` rounds away most of `x`'s digits before the logarithm sees them
    (in float32, `torch.log(1 + 1e-8)` is exactly 0), while `torch.log1p` computes the same
    quantity without forming `1 + x`. `torch.log1p` exists in every supported release (2.4 through
    2.14).

    The fix is unsafe only because the results differ in the last bits (they become more
    accurate), which can change bit-exact tests or golden files.
    """

    code = "TP900"
    name = "torch-log1p"
    summary = "`torch.log(1 + x)` -> `torch.log1p(x)` (accuracy for small x)"
    changed_in = v("2.4")  # not a release change: 2.4 is the oldest release this hint is checked against
    opt_in = True
    fix_safety = UNSAFE
    fix_safety_note = "`log1p` is more accurate, so values change in the last bits (bit-exact tests may notice)."
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.log1p.html",)
    torchfix_codes = ("TOR106",)
    calls = frozenset({"torch.log"})

    VALID = [
        "import torch\ny = torch.log1p(x)\n",
        "import torch\ny = torch.log(2 + x)\n",
        "import torch\ny = torch.log(1 - x)\n",
        # Look-alikes: math.log, numpy.log, a method.
        "import torch\nimport math\ny = math.log(1 + x)\n",
        "import torch\nimport numpy as np\ny = np.log(1 + x)\n",
        "import torch\ny = (1 + x).log()\n",
    ]
    INVALID = [
        Invalid("import torch\ny = torch.log(1 + x)\n", fixed="import torch\ny = torch.log1p(x)\n"),
        Invalid("import torch as th\ny = th.log(x.exp() + 1.0)\n", fixed="import torch as th\ny = th.log1p(x.exp())\n"),
        Invalid("from torch import log\ny = log(1 + a * b)\n", fixed="import torch\ny = torch.log1p(a * b)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if has_star_args(call) or len(call.args) != 1 or call.keywords:
            return
        argument = call.args[0]
        if not isinstance(argument, ast.BinOp) or not isinstance(argument.op, ast.Add):
            return
        if is_one(argument.left):
            other = argument.right
        elif is_one(argument.right):
            other = argument.left
        else:
            return
        fix = None
        if isinstance(call.func, (ast.Name, ast.Attribute)):
            name, import_edits = ctx.name_for("torch.log1p")
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            fix = Fix(message="Replace with `torch.log1p(x)`",
                      edits=[*import_edits, Edit(ctx.start(call), ctx.end(call), f"{name}({ctx.source(other)})")],
                      applicability=UNSAFE, obsolete_names=(root.id,))
        yield ctx.diagnostic(call, "`torch.log(1 + x)` loses precision for small x; use `torch.log1p(x)` "
                                   "(in every PyTorch release 2.4 through 2.15)", fix)
