"""TP263: a deprecated `torch.Tensor` method (read from the wheels) called on a known tensor."""

from __future__ import annotations

from torchpatch.rules import _api_db
from torchpatch.rules import _receivers as receivers
from torchpatch.rules._wheel_rules import LazyNames, shorten
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_PREFIX = "torch.Tensor."
#: Handled by their own rules (TP224: ``storage()``/``storage_type()``).
_OWN_RULES = frozenset({"storage", "storage_type"})


def _methods() -> set[str]:
    return {name[len(_PREFIX):] for name, found in _api_db.deprecations().items()
            if name.startswith(_PREFIX) and found.kind == "member" and "." not in name[len(_PREFIX):]
            and name[len(_PREFIX):] not in _OWN_RULES}


class DeprecatedTensorMethod(Rule):
    """
    ## What it does
    Flags calls of `torch.Tensor` methods that the wheels mark deprecated (in
    `rules/data/api_db.json.gz`, built by `scripts/build_api_db.py` from the 2.4 … 2.15 wheels: today
    `Tensor.resize(...)` and `Tensor.resize_as(...)`, the out-of-place twins of `resize_`/`resize_as_`)
    on objects known to be tensors (how: `rules/_receivers.py`, `is_tensor`). A new release's deprecated
    tensor methods are data, not code.

    ## Why is this bad?
    torch warns where they run (`UserWarning: non-inplace resize is deprecated`, every release 2.4 …
    2.15) and will remove them. `x.resize(*sizes)` goes through autograd's `Resize`, which only allows the
    same number of elements: use `x.reshape(*sizes)` (or `x.view(...)`), or the in-place `x.resize_(...)`
    on a tensor that does not need gradients. No fix: which one was meant is a judgment.
    """

    code = "TP263"
    name = "deprecated-tensor-method"
    summary = "A deprecated `torch.Tensor` method (`resize`, `resize_as`, …) called on a known tensor"
    deprecated_in = v("2.4")
    torch_message = "non-inplace resize is deprecated"
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.Tensor.resize_.html",)
    methods = LazyNames(_methods)

    VALID = [
        Valid("import torch\nx = torch.ones(2, 3)\ny = x.reshape(3, 2)\n", torch_runs_clean=True),
        # Not known to be a tensor: a PIL image's resize.
        "import torch\nfrom PIL import Image\nimg = Image.open(path)\nsmall = img.resize((32, 32))\n",
        "import torch\ndef shrink(image):\n    return image.resize((8, 8))\n",
    ]
    INVALID = [
        Invalid("import torch\nx = torch.ones(2, 3)\ny = x.resize(3, 2)\n", torch_warns="non-inplace resize is deprecated"),
        Invalid("import torch\na = torch.ones(2)\nb = a.resize_as(torch.zeros(2))\n",
                torch_warns="non-inplace resize_as is deprecated"),
        # A method only tensors have (contiguous) makes the unknown argument's result a tensor.
        Invalid("import torch\ndef to_rows(img, width):\n    flat = img.contiguous().view(-1)\n"
                "    return flat.resize(flat.numel() // width, width)\n\nrows = to_rows(torch.ones(2, 4), 2)\n",
                torch_warns="non-inplace resize is deprecated"),
    ]

    def check_method_call(self, ctx, call):
        name = call.func.attr
        found = _api_db.deprecations().get(_PREFIX + name)
        if found is None or found.deprecated_in > ctx.target or not receivers.is_tensor(ctx, call.func.value):
            return
        since = "2.4 or earlier" if found.deprecated_in == v("2.4") else str(found.deprecated_in)
        yield ctx.diagnostic(call, f"`Tensor.{name}()` is deprecated (PyTorch {since} through {ctx.target} warn: "
                                   f"\"{shorten(found.message)}\")")
