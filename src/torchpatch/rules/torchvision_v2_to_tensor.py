"""TP601: torchvision.transforms.v2.ToTensor (deprecated) -> v2.Compose([v2.ToImage(), v2.ToDtype(float32, scale=True)])."""

from __future__ import annotations

import ast

from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_V2 = "torchvision.transforms.v2"


class TorchvisionV2ToTensor(Rule):
    """
    ## What it does
    Flags uses of `torchvision.transforms.v2.ToTensor` and rewrites `v2.ToTensor()` to
    `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.

    ## Why is this bad?
    Its constructor warns "The transform `ToTensor()` is deprecated and will be removed in a future
    release" (a `UserWarning`) in torchvision 0.19 and 0.29, the releases paired with PyTorch 2.4
    and 2.14, and points to the replacement the fix writes. The v1
    `torchvision.transforms.ToTensor` is not deprecated and is not flagged.

    The fix is unsafe: `v2.ToImage()` returns a `tv_tensors.Image` (a `Tensor` subclass) where
    `ToTensor` returned a plain tensor, and torchvision says the output is equal "up to float
    precision".
    """

    code = "TP601"
    name = "torchvision-v2-to-tensor"
    summary = "`torchvision.transforms.v2.ToTensor` (deprecated) -> `v2.ToImage()` + `v2.ToDtype(torch.float32, scale=True)`"
    deprecated_in = v("2.4")  # warns in torchvision 0.19 (paired with PyTorch 2.4) through 0.29 (2.14)
    fix_safety = UNSAFE
    fix_safety_note = (
        "The pipeline returns a `tv_tensors.Image` instead of a plain tensor, with values equal up to float precision."
    )
    references = ("https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.v2.ToTensor.html",)
    torchfix_codes = ("TOR202",)
    references_to = frozenset({f"{_V2}.ToTensor"})

    VALID = [
        "import torch\nfrom torchvision.transforms import v2\nt = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])\n",
        # The v1 transform is not deprecated; a local class of the same name.
        "from torchvision import transforms\nt = transforms.ToTensor()\n",
        "import torch\nclass ToTensor:\n    pass\nt = ToTensor()\n",
    ]
    INVALID = [
        Invalid("import torch\nfrom torchvision.transforms import v2\nt = v2.Compose([v2.ToTensor(), v2.Normalize(m, s)])\n",
                fixed="import torch\nfrom torchvision.transforms import v2\n"
                      "t = v2.Compose([v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]), v2.Normalize(m, s)])\n"),
        Invalid("import torchvision.transforms.v2 as T\nclass Pipeline(T.ToTensor):\n    pass\n"),
        Invalid("from torchvision.transforms.v2 import ToImage, ToTensor\nt = ToImage()\n"),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import:
            # Each use is reported (and fixed) where it is called; an import nothing uses is reported
            # itself (TorchFix's TOR202 reports every import).
            yield from self._unused_import(ctx, reference)
            return
        node = reference.node
        fix = None
        call = _called(ctx, node)
        if call is not None and not call.args and not call.keywords:
            compose, edits_a = ctx.name_for(f"{_V2}.Compose", _V2)
            to_image, edits_b = ctx.name_for(f"{_V2}.ToImage", _V2)
            to_dtype, edits_c = ctx.name_for(f"{_V2}.ToDtype", _V2)
            float32, edits_d = ctx.name_for("torch.float32", "torch")
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            text = f"{compose}([{to_image}(), {to_dtype}({float32}, scale=True)])"
            fix = Fix(message="Replace with `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`",
                      edits=[*edits_a, *edits_b, *edits_c, *edits_d, Edit(ctx.start(call), ctx.end(call), text)],
                      applicability=UNSAFE, obsolete_names=(root.id,))
        yield ctx.diagnostic(node, "`v2.ToTensor` is deprecated (UserWarning in torchvision 0.19-0.29, paired with "
                                   "PyTorch 2.4-2.14); use `v2.ToImage()` and `v2.ToDtype(torch.float32, scale=True)`",
                             fix)


    def _unused_import(self, ctx, reference):
        alias = reference.node
        if not isinstance(alias, ast.alias) or not isinstance(reference.statement, ast.ImportFrom):
            return
        local = alias.asname or alias.name
        if any(isinstance(node, ast.Name) and node.id == local for node in ast.walk(ctx.tree)):
            return
        yield ctx.diagnostic(alias, f"`v2.ToTensor` is deprecated (UserWarning in torchvision 0.19-0.29, paired "
                                    f"with PyTorch 2.4-2.14) and `{local}` is imported but not used: remove it")


def _called(ctx, node):
    if ctx.statement is None:
        return None
    for candidate in ast.walk(ctx.statement):
        if isinstance(candidate, ast.Call) and candidate.func is node:
            return candidate
    return None
