"""TP253: nn.UpsamplingNearest2d/UpsamplingBilinear2d and F.upsample/upsample_nearest/upsample_bilinear (deprecated)
-> nn.Upsample / F.interpolate with the same mode."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import add_keyword, has_double_star, keyword, replace_node
from torchpatch.rules.base import SAFE, Fix, Invalid, Rule
from torchpatch.versions import v

_F = "torch.nn.functional"

#: Old callable -> (replacement, the arguments it adds, how many positional arguments the old one takes).
#: Read from torch/nn/modules/upsampling.py and torch/nn/functional.py of the 2.4.1 wheel and of torch 2.13:
#: the classes only call ``Upsample.__init__(size, scale_factor, mode=...)`` and the functions return
#: ``interpolate(input, size, scale_factor, ...)`` with these arguments.
REPLACEMENTS = {
    "torch.nn.UpsamplingNearest2d": ("torch.nn.Upsample", 'mode="nearest"', 2),
    "torch.nn.UpsamplingBilinear2d": ("torch.nn.Upsample", 'mode="bilinear", align_corners=True', 2),
    f"{_F}.upsample": (f"{_F}.interpolate", "", 5),
    f"{_F}.upsample_nearest": (f"{_F}.interpolate", 'mode="nearest"', 3),
    f"{_F}.upsample_bilinear": (f"{_F}.interpolate", 'mode="bilinear", align_corners=True', 3),
}

#: Which ones warn at run time (a UserWarning "`nn.functional.upsample...` is deprecated"); the classes do not.
WARNS = frozenset({f"{_F}.upsample", f"{_F}.upsample_nearest", f"{_F}.upsample_bilinear"})


class LegacyUpsampling(Rule):
    """
    ## What it does
    Flags `torch.nn.UpsamplingNearest2d`, `torch.nn.UpsamplingBilinear2d`,
    `torch.nn.functional.upsample`, `upsample_nearest` and `upsample_bilinear`, and rewrites them to
    `nn.Upsample` / `F.interpolate` with the mode they stand for.

    ## Why is this bad?
    All five have been deprecated in favour of `interpolate` since PyTorch 0.4. The functions warn
    on every call ("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate`
    instead.", a `UserWarning` in 2.4 through 2.15); the two classes say so in their documentation
    only ("This class is deprecated in favor of `interpolate()`").

    Each is a thin wrapper, so the fix keeps the output identical:
    `UpsamplingNearest2d(size, scale_factor)` is `Upsample(size, scale_factor, mode="nearest")`,
    `UpsamplingBilinear2d(...)` is `Upsample(..., mode="bilinear", align_corners=True)`,
    `upsample(...)` is `interpolate(...)` with the same arguments, and `upsample_nearest` /
    `upsample_bilinear` are `interpolate` with `mode="nearest"` / `mode="bilinear",
    align_corners=True`. (The modules have no parameters or buffers, so state dicts are unaffected;
    only the class name in `repr` and `isinstance` checks change.)
    """

    code = "TP253"
    name = "legacy-upsampling"
    summary = "`nn.UpsamplingNearest2d`/`UpsamplingBilinear2d`, `F.upsample*` (deprecated) -> `nn.Upsample`/`F.interpolate`"
    deprecated_in = v("0.4")  # the notes came with `F.interpolate` (0.4.1, per the docs history; not wheel-checked)
    fix_safety = SAFE
    fix_safety_note = (
        "The old classes and functions only call `Upsample`/`interpolate` with the arguments the fix writes. "
        "`isinstance(m, nn.UpsamplingNearest2d)` checks elsewhere stop matching the new module."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.UpsamplingNearest2d.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html",
    )
    torchfix_codes = ("TOR101", "TOR103")
    calls = frozenset(REPLACEMENTS)

    VALID = [
        'import torch\nup = torch.nn.Upsample(scale_factor=2, mode="nearest")\n',
        "import torch.nn.functional as F\ny = F.interpolate(x, scale_factor=2)\n",
        # Look-alikes: a local class, another library's module and function.
        "import torch\nclass UpsamplingNearest2d:\n    pass\nup = UpsamplingNearest2d()\n",
        "import torch\nfrom mylib.layers import UpsamplingBilinear2d\nup = UpsamplingBilinear2d(scale_factor=2)\n",
        "import torch\nimport tensorflow as tf\ny = tf.keras.layers.UpSampling2d(2)\n",
    ]
    INVALID = [
        Invalid("import torch.nn as nn\nup = nn.UpsamplingNearest2d(scale_factor=2)\n",
                fixed='import torch.nn as nn\nup = nn.Upsample(scale_factor=2, mode="nearest")\n'),
        Invalid("import torch\nup = torch.nn.UpsamplingBilinear2d(size=(64, 64))\n",
                fixed='import torch\nup = torch.nn.Upsample(size=(64, 64), mode="bilinear", align_corners=True)\n'),
        Invalid("import torch.nn.functional as F\ny = F.upsample_bilinear(x, scale_factor=2)\n",
                fixed='import torch.nn.functional as F\ny = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)\n'),
        Invalid("from torch.nn.functional import upsample\ny = upsample(x, None, 2, 'bicubic')\n",
                fixed="import torch\ny = torch.nn.functional.interpolate(x, None, 2, 'bicubic')\n"),
        Invalid("from torch.nn import UpsamplingNearest2d\nup = UpsamplingNearest2d(None, 2)\n",
                fixed='import torch\nup = torch.nn.Upsample(None, 2, mode="nearest")\n'),
        Invalid("import torch\nup = torch.nn.UpsamplingNearest2d(**options)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        new, extra, positional = REPLACEMENTS[qualname]
        old_text = qualname.replace("torch.nn.functional.", "F.").replace("torch.nn.", "nn.")
        new_text = new.replace("torch.nn.functional.", "F.").replace("torch.nn.", "nn.")
        use = f"`{new_text}(..., {extra})`" if extra else f"`{new_text}`"
        how = "UserWarning" if qualname in WARNS else "documented; no runtime warning"
        message = f"`{old_text}` is deprecated since PyTorch 0.4 ({how}, still shipped in 2.15); use {use}"
        fix = None
        starred = any(isinstance(arg, ast.Starred) for arg in call.args)
        if isinstance(call.func, (ast.Name, ast.Attribute)) and (
                not extra or (not has_double_star(call) and not starred and keyword(call, "mode") is None
                              and len(call.args) <= positional)):
            name, import_edits = ctx.name_for(new, new.rpartition(".")[0])
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            edits = [*import_edits, replace_node(ctx, call.func, name)]
            if extra:
                edits.append(add_keyword(ctx, call, extra))
            fix = Fix(message=f"Replace with {use}", edits=edits, applicability=SAFE, obsolete_names=(root.id,))
        yield ctx.diagnostic(call, message, fix)
