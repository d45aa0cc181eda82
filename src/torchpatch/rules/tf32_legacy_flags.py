"""TP421 (opt-in): the legacy allow_tf32 flags next to the fp32_precision API of PyTorch 2.9."""

from __future__ import annotations

import ast

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: Legacy flag -> the 2.9 setting that replaces it (src 2.9 torch/backends/cuda and cudnn).
LEGACY_FLAGS = {
    "torch.backends.cuda.matmul.allow_tf32": "torch.backends.cuda.matmul.fp32_precision",
    "torch.backends.cudnn.allow_tf32": "torch.backends.cudnn.conv.fp32_precision",
}


class Tf32LegacyFlags(Rule):
    """
    ## What it does
    Reports assignments to the legacy TF32 switches `torch.backends.cuda.matmul.allow_tf32`
    and `torch.backends.cudnn.allow_tf32`. It is opt-in and has no fix: the legacy flags still work
    in 2.15. Reading a flag, and restoring a value saved from it
    (`old = torch.backends.cuda.matmul.allow_tf32` ... `torch.backends.cuda.matmul.allow_tf32 = old`),
    sets nothing and is not reported.

    ## Why is this bad?
    PyTorch 2.9 added per-backend, per-operator precision settings:
    `torch.backends.cuda.matmul.fp32_precision = "tf32"` (or `"ieee"`),
    `torch.backends.cudnn.conv.fp32_precision`, `torch.backends.cudnn.rnn.fp32_precision` and the
    global `torch.backends.fp32_precision`, and announced that the legacy flags will be deprecated.
    The two APIs share state, and mixing them can fail: after
    `torch.backends.cudnn.conv.fp32_precision = "ieee"`, reading `torch.backends.cudnn.allow_tf32`
    raises `RuntimeError: ... you have used a mix of the legacy and new APIs to set the TF32 flags`
    (torch 2.13). Pick one API per program; when your minimum torch is 2.9 or newer, prefer the new
    one (`True` → `"tf32"`, `False` → `"ieee"`), and mind `torch.set_float32_matmul_precision`, which
    sets the same matmul state.

    ## Which working code changes behaviour
    None: the legacy flags work through 2.15 and set the same state as the new API; only a program
    that mixes the two APIs can raise. The rule is opt-in.
    """

    code = "TP421"
    name = "tf32-legacy-flags"
    summary = "Legacy `allow_tf32` flags; PyTorch 2.9 added `fp32_precision` and mixing the two can raise (opt-in)"
    changed_in = v("2.9")
    replacement_since = v("2.9")
    opt_in = True
    references = (
        "https://docs.pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices",
    )
    catalog_ids = ("compile.tf32-api",)
    references_to = frozenset(LEGACY_FLAGS)

    VALID = [
        "import torch\ntorch.backends.cuda.matmul.fp32_precision = \"tf32\"\n",
        "import torch\ntorch.backends.cudnn.conv.fp32_precision = \"tf32\"\n",
        Valid("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", target_torch="2.8"),
        "import torch\nself.backends.cuda.matmul.allow_tf32 = True\n",
        "from torch.backends import cudnn\nif cudnn.allow_tf32:\n    pass\n",
        # A saved flag, restored later, is not the flag being set.
        "import torch\nold = torch.backends.cuda.matmul.allow_tf32\ntry:\n    run()\nfinally:\n"
        "    torch.backends.cuda.matmul.allow_tf32 = old\n",
    ]
    INVALID = [
        Invalid("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"),
        Invalid("import torch\ntorch.backends.cudnn.allow_tf32 = False\n"),
        Invalid("from torch.backends import cudnn\ncudnn.allow_tf32 = args.tf32\n"),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import or not _sets_the_flag(ctx, reference):
            return
        new = LEGACY_FLAGS[reference.qualname]
        message = (f"`{reference.qualname}` is the legacy TF32 switch; PyTorch {self.changed_in} added `{new}` "
                   f"(\"tf32\"/\"ieee\"): use one API only, mixing them can raise RuntimeError")
        yield ctx.diagnostic(reference.node, message)


def _sets_the_flag(ctx, reference) -> bool:
    """An assignment to the flag, other than putting back a value saved from the same flag."""
    node = reference.node
    if not isinstance(getattr(node, "ctx", None), ast.Store):
        return False
    statement = reference.statement
    value = getattr(statement, "value", None)
    if type(value) is ast.Name:
        for other in ast.walk(ctx.tree):
            if type(other) is ast.Assign and any(type(t) is ast.Name and t.id == value.id for t in other.targets) \
                    and ctx.scopes.qualname(other.value, ctx.scope) == reference.qualname:
                return False
    return True
