"""TP232: torch.has_cuda / has_cudnn / has_mps / has_mkldnn are deprecated module attributes."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import root_name
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: ``torch._deprecated_attrs`` (the same table in src 2.4 and 2.13 torch/__init__.py): reading the
#: attribute warns and returns exactly what the function returns.
REPLACEMENTS = {
    "torch.has_cuda": "torch.backends.cuda.is_built",
    "torch.has_cudnn": "torch.backends.cudnn.is_available",
    "torch.has_mps": "torch.backends.mps.is_built",
    "torch.has_mkldnn": "torch.backends.mkldnn.is_available",
}


class TorchHasBackendAttrs(Rule):
    """
    ## What it does
    Flags reads of `torch.has_cuda`, `torch.has_cudnn`, `torch.has_mps` and `torch.has_mkldnn`,
    and replaces them with the functions they call.

    ## Why is this bad?
    These attributes are kept only for compatibility: reading one runs torch's module
    `__getattr__`, which emits `UserWarning: 'has_cuda' is deprecated, please use
    'torch.backends.cuda.is_built()'` and returns that function's result. The replacements are
    `torch.backends.cuda.is_built()`, `torch.backends.cudnn.is_available()`,
    `torch.backends.mps.is_built()` and `torch.backends.mkldnn.is_available()`; they exist in every
    supported release and return the same value, so the fix is safe.

    Note what they mean: `has_cuda` / `is_built()` says whether this build of torch has CUDA
    support, not whether a GPU is usable; use `torch.cuda.is_available()` for that. Other `has_*`
    attributes (`has_lapack`, `has_mkl`, `has_openmp`, ...) are not deprecated.
    """

    code = "TP232"
    name = "torch-has-backend-attrs"
    summary = "`torch.has_cuda`/`has_cudnn`/`has_mps`/`has_mkldnn` (deprecated; call the `torch.backends` functions)"
    deprecated_in = v("2.1")
    replacement_since = v("2.1")
    fix_safety = SAFE
    fix_safety_note = "The attribute returns exactly the replacement function's result (torch's `_deprecated_attrs` table)."
    references = (
        "https://docs.pytorch.org/docs/stable/backends.html",
    )
    catalog_ids = ("misc.has-attrs",)
    references_to = frozenset(REPLACEMENTS)

    VALID = [
        "import torch\nif torch.backends.cuda.is_built():\n    pass\n",
        "import torch\nuse_lapack = torch.has_lapack\n",
        # Look-alikes: other objects' has_cuda, a local variable.
        "import torch\nclass Env:\n    def probe(self):\n        return self.has_cuda\n",
        "import torch\nhas_cuda = torch.cuda.is_available()\nprint(has_cuda)\n",
        "import tensorflow as tf\nok = tf.test.has_cuda\n",
    ]
    INVALID = [
        Invalid("import torch\nif torch.has_cuda:\n    pass\n",
                fixed="import torch\nif torch.backends.cuda.is_built():\n    pass\n"),
        Invalid("import torch as th\nflags = [th.has_mps, th.has_mkldnn]\n",
                fixed="import torch as th\nflags = [th.backends.mps.is_built(), th.backends.mkldnn.is_available()]\n"),
        Invalid("from torch import has_cudnn\nprint(has_cudnn)\n",
                fixed="import torch\nprint(torch.backends.cudnn.is_available())\n"),
    ]

    def check_reference(self, ctx, reference):
        node = reference.node
        replacement = REPLACEMENTS[reference.qualname]
        message = (f"`{reference.qualname}` is deprecated (a UserWarning since PyTorch {self.deprecated_in}); "
                   f"call `{replacement}()`")
        if reference.in_import:
            return  # reported (and fixed) where the name is read; the fix then drops the import
        if not isinstance(getattr(node, "ctx", None), ast.Load):
            return  # assigned or deleted: not a read
        # ``import torch`` loads torch.backends and its cuda/cudnn/mps/mkldnn submodules (src 2.4 and 2.13).
        text, import_edits = ctx.name_for(replacement, module="torch.backends")
        fix = Fix(message=f"Replace with `{replacement}()` (the same value)",
                  edits=[*import_edits, Edit(ctx.start(node), ctx.end(node), f"{text}()")],
                  applicability=SAFE, obsolete_names=root_name(node))
        yield ctx.diagnostic(node, message, fix)
