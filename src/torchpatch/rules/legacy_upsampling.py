"""TP253: nn.UpsamplingNearest2d / nn.UpsamplingBilinear2d (deprecated) -> nn.Upsample with the same mode."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import add_keyword, has_double_star, keyword, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: The arguments each class passes to ``Upsample.__init__`` (torch/nn/modules/upsampling.py, 2.4.1 and 2.13).
MODES = {
    "torch.nn.UpsamplingNearest2d": 'mode="nearest"',
    "torch.nn.UpsamplingBilinear2d": 'mode="bilinear", align_corners=True',
}


class UpsamplingModule(Rule):
    """
    ## What it does
    Flags `torch.nn.UpsamplingNearest2d(...)` and `torch.nn.UpsamplingBilinear2d(...)` and rewrites
    them to `torch.nn.Upsample(..., mode="nearest")` and
    `torch.nn.Upsample(..., mode="bilinear", align_corners=True)`.

    ## Why is this bad?
    Both classes are documented as deprecated ("This class is deprecated in favor of
    `interpolate()`", in 2.4 through 2.13; no runtime warning). They are thin subclasses of
    `nn.Upsample` whose `__init__` only fixes the mode: `UpsamplingNearest2d(size, scale_factor)`
    is `Upsample(size, scale_factor, mode="nearest")` and `UpsamplingBilinear2d(size, scale_factor)`
    is `Upsample(size, scale_factor, mode="bilinear", align_corners=True)`, so the fix keeps the
    output identical. (Neither module has parameters or buffers, so state dicts are unaffected;
    only the class name in `repr` and `isinstance` checks change.)
    """

    code = "TP253"
    name = "upsampling-module"
    summary = "`nn.UpsamplingNearest2d`/`nn.UpsamplingBilinear2d` (deprecated) -> `nn.Upsample` with the same mode"
    deprecated_in = v("0.4")  # the note came with `F.interpolate` (0.4.1, per the docs history; not wheel-checked)
    fix_safety = SAFE
    fix_safety_note = (
        "The classes only call `Upsample.__init__` with the mode the fix writes; the forward pass is the same "
        "code. `isinstance(m, nn.UpsamplingNearest2d)` checks elsewhere stop matching the new module."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.UpsamplingNearest2d.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Upsample.html",
    )
    torchfix_codes = ("TOR101", "TOR103")
    calls = frozenset(MODES)

    VALID = [
        'import torch\nup = torch.nn.Upsample(scale_factor=2, mode="nearest")\n',
        "import torch.nn.functional as F\ny = F.interpolate(x, scale_factor=2)\n",
        # Look-alikes: a local class, another library's module.
        "import torch\nclass UpsamplingNearest2d:\n    pass\nup = UpsamplingNearest2d()\n",
        "import torch\nfrom mylib.layers import UpsamplingBilinear2d\nup = UpsamplingBilinear2d(scale_factor=2)\n",
    ]
    INVALID = [
        Invalid("import torch.nn as nn\nup = nn.UpsamplingNearest2d(scale_factor=2)\n",
                fixed='import torch.nn as nn\nup = nn.Upsample(scale_factor=2, mode="nearest")\n'),
        Invalid("import torch\nup = torch.nn.UpsamplingBilinear2d(size=(64, 64))\n",
                fixed='import torch\nup = torch.nn.Upsample(size=(64, 64), mode="bilinear", align_corners=True)\n'),
        Invalid("from torch.nn import UpsamplingNearest2d\nup = UpsamplingNearest2d(None, 2)\n",
                fixed='import torch\nup = torch.nn.Upsample(None, 2, mode="nearest")\n'),
        Invalid("import torch\nup = torch.nn.UpsamplingNearest2d(**options)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        mode = MODES[qualname]
        old = qualname.rpartition(".")[2]
        message = (f"`nn.{old}` is documented as deprecated since PyTorch 0.4 (no runtime warning; still shipped in 2.14); "
                   f"use `nn.Upsample(..., {mode})`")
        fix = None
        if (not has_double_star(call) and keyword(call, "mode") is None and len(call.args) <= 2
                and isinstance(call.func, (ast.Name, ast.Attribute))
                and not any(isinstance(arg, ast.Starred) for arg in call.args)):
            name, import_edits = ctx.name_for("torch.nn.Upsample", "torch.nn")
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            fix = Fix(message=f"Replace with `nn.Upsample(..., {mode})`",
                      edits=[*import_edits, replace_node(ctx, call.func, name), add_keyword(ctx, call, mode)],
                      applicability=SAFE, obsolete_names=(root.id,))
        yield ctx.diagnostic(call, message, fix)
