"""TP901 (opt-in): torch.exp(x) - 1 -> torch.expm1(x)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_star_args
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.rules.torch_log1p import is_one
from torchpatch.versions import v


class TorchExpm1(Rule):
    """
    ## What it does
    Flags `torch.exp(x) - 1` and rewrites it to `torch.expm1(x)`. Opt-in: enable it with
    `--extend-select TP901` (or `--select TOR107`).

    ## Why is this bad?
    For small `|x|`, `exp(x)` is close to 1 and subtracting 1 cancels most of its digits (in
    float32, `torch.exp(x) - 1` for `x = 1e-8` is exactly 0), while `torch.expm1` computes
    `e^x - 1` directly. `torch.expm1` exists in every supported release (2.4 through 2.15); TorchFix
    suggests its alias `torch.special.expm1`.

    The fix is unsafe only because the results differ in the last bits (they become more
    accurate), which can change bit-exact tests or golden files.
    """

    code = "TP901"
    name = "torch-expm1"
    summary = "`torch.exp(x) - 1` -> `torch.expm1(x)` (accuracy for small x)"
    changed_in = v("2.4")  # not a release change: 2.4 is the oldest release this hint is checked against
    opt_in = True
    fix_safety = UNSAFE
    fix_safety_note = "`expm1` is more accurate, so values change in the last bits (bit-exact tests may notice)."
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.expm1.html",)
    torchfix_codes = ("TOR107",)
    calls = frozenset({"torch.exp"})

    VALID = [
        "import torch\ny = torch.expm1(x)\n",
        "import torch\ny = torch.exp(x) - 2\n",
        "import torch\ny = 1 - torch.exp(x)\n",
        "import torch\ny = 2 * torch.exp(x) - 1\n",
        # Look-alikes: math.exp, numpy.exp, a method.
        "import torch\nimport math\ny = math.exp(x) - 1\n",
        "import torch\nimport numpy as np\ny = np.exp(x) - 1\n",
        "import torch\ny = x.exp() - 1\n",
    ]
    INVALID = [
        Invalid("import torch\ny = torch.exp(x) - 1\n", fixed="import torch\ny = torch.expm1(x)\n"),
        Invalid("import torch as th\ny = scale * (th.exp(x / 2) - 1.0)\n",
                fixed="import torch as th\ny = scale * (th.expm1(x / 2))\n"),
        Invalid("from torch import exp\ny = exp(x) - 1\n", fixed="import torch\ny = torch.expm1(x)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if has_star_args(call) or len(call.args) != 1 or call.keywords or ctx.statement is None:
            return
        for node in ast.walk(ctx.statement):
            if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and node.left is call
                    and is_one(node.right)):
                break
        else:
            return
        fix = None
        if isinstance(call.func, (ast.Name, ast.Attribute)):
            name, import_edits = ctx.name_for("torch.expm1")
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            fix = Fix(message="Replace with `torch.expm1(x)`",
                      edits=[*import_edits, Edit(ctx.start(node), ctx.end(node), f"{name}({ctx.source(call.args[0])})")],
                      applicability=UNSAFE, obsolete_names=(root.id,))
        yield ctx.diagnostic(node, "`torch.exp(x) - 1` loses precision for small x; use `torch.expm1(x)` "
                                   "(in every PyTorch release 2.4 through 2.15)", fix)
