"""TP906 (opt-in): `.storage()` / `.storage_type()` on an object of unknown type (TP224 takes known tensors)."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules.base import Invalid, Valid
from torchpatch.rules.tensor_storage_method import TensorStorageMethod


class TensorStorageUnknownReceiver(TensorStorageMethod):
    """
    ## What it does
    Flags zero-argument `.storage()` and `.storage_type()` calls on objects of unknown type in files
    that import torch, the usual way to reach a tensor's `TypedStorage`; TP224 reports them by default
    where the object is known to be a tensor. It is opt-in: other libraries have `.storage()` methods
    too. Measured on the sources of accelerate, pytorch_geometric, litgpt, torchtune, diffusers,
    lightning, timm and transformers, it reports 2 calls, both in accelerate's `except Exception:`
    fallback for torch 1.10. Calls on `self`/`cls`, with arguments, or on names imported from other
    libraries are never reported. The fix is TP224's.

    ## Why is this bad?
    `Tensor.storage()` returns a `TypedStorage`, deprecated since PyTorch 2.0 ("TypedStorage is
    deprecated", a `UserWarning`); `untyped_storage()` counts bytes, not elements.
    """

    code = "TP906"
    name = "tensor-storage-unknown-receiver"
    summary = "`.storage()` on an object of unknown type: a deprecated `TypedStorage` if it is a tensor (opt-in)"
    opt_in = True

    VALID = [
        "import torch\nptr = x.untyped_storage().data_ptr()\n",
        "import torch\nclass Holder:\n    def size(self):\n        return len(self.storage())\n",
        "import torch\nfrom django.core.files.storage import default_storage\nbackend = default_storage.storage()\n",
        "import torch\nbucket = client.storage(\"bucket-name\")\n",
        Valid("store = x.storage()\n"),
    ]
    INVALID = [
        Invalid("import torch\nsame = a.storage().data_ptr() == b.storage().data_ptr()\n",
                fixed="import torch\nsame = a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()\n"),
        Invalid("import torch\nif tensor.storage().device.type == \"cuda\":\n    pass\n",
                fixed="import torch\nif tensor.untyped_storage().device.type == \"cuda\":\n    pass\n"),
        Invalid("import torch\nelements = len(weight.storage())\n"),
        Invalid("import torch\nfirst = self.weight.storage()[0]\n"),
    ]

    def known_receiver(self, ctx, receiver: ast.expr) -> bool:
        return not receivers.is_tensor(ctx, receiver)
