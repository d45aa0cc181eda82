"""TP224 (opt-in): tensor.storage() returns a deprecated TypedStorage."""

from __future__ import annotations

import ast

from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: Members that give the same answer on a TypedStorage and on the tensor's UntypedStorage (both
#: read the same byte buffer): ``x.storage().data_ptr()`` == ``x.untyped_storage().data_ptr()``.
SAME_ON_UNTYPED = frozenset({"data_ptr", "nbytes", "is_shared", "is_pinned"})
SAME_ON_UNTYPED_ATTRIBUTES = frozenset({"device", "is_cuda"})
_NOT_TENSORS = frozenset({"self", "cls", "super"})


class TensorStorageMethod(Rule):
    """
    ## What it does
    Flags zero-argument `.storage()` calls on objects of unknown type in files that import torch,
    the usual way to reach a tensor's `TypedStorage`. It is opt-in: the engine cannot know that the
    object is a tensor, and other libraries have `.storage()` methods too. Measured on the sources of
    accelerate, pytorch_geometric, litgpt, torchtune, diffusers, lightning, timm and transformers, it
    reports 2 calls, both in accelerate's `except Exception:` fallback for torch 1.10: too few right
    findings to turn on for everyone (the constructors, TP223, are on by default). Calls on `self`/`cls`,
    with arguments, or on names imported from other libraries are never reported.

    Where the storage is only asked for something a byte buffer answers identically
    (`.data_ptr()`, `.nbytes()`, `.is_shared()`, `.is_pinned()`, `.device`, `.is_cuda`), the fix
    switches to `.untyped_storage()`; other uses are reported without a fix.

    ## Why is this bad?
    `Tensor.storage()` returns a `TypedStorage`, deprecated since PyTorch 2.0 (`UserWarning`:
    "TypedStorage is deprecated", once per process). Its replacement `Tensor.untyped_storage()`
    returns the same memory as bytes: `len()`, `size()`, indexing, `tolist()`, `resize_()` and
    `copy_()` count bytes instead of elements, so a blind rename would silently change results
    (a float32 tensor of 3 elements has a storage of size 3 but an untyped storage of size 12).
    """

    code = "TP224"
    torch_message = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                     "the only storage class. This should only matter to you if you are using storages "
                     "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                     "tensor.storage()")
    name = "tensor-storage-method"
    summary = "`tensor.storage()` returns a deprecated `TypedStorage` (since 2.0); use `untyped_storage()` (opt-in)"
    deprecated_in = v("2.0")
    replacement_since = v("2.0")
    opt_in = True
    fix_safety = SAFE
    fix_safety_note = (
        "Only offered when the storage is used for `data_ptr()`, `nbytes()`, `is_shared()`, `is_pinned()`, "
        "`device` or `is_cuda`, which are the same on the untyped storage; sizes and indexing are not, so "
        "other uses have no fix."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/storage.html",
    )
    catalog_ids = ("ag.typed-storage",)
    methods = frozenset({"storage"})

    VALID = [
        "import torch\nptr = x.untyped_storage().data_ptr()\n",
        "import torch\nclass Holder:\n    def size(self):\n        return len(self.storage())\n",
        "import torch\nfrom django.core.files.storage import default_storage\nbackend = default_storage.storage()\n",
        "import torch\nbucket = client.storage(\"bucket-name\")\n",
        # A file without torch: never looked at.
        Valid("store = x.storage()\n"),
    ]
    INVALID = [
        Invalid("import torch\nsame = a.storage().data_ptr() == b.storage().data_ptr()\n",
                fixed="import torch\nsame = a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()\n"),
        Invalid("import torch\nif tensor.storage().device.type == \"cuda\":\n    pass\n",
                fixed="import torch\nif tensor.untyped_storage().device.type == \"cuda\":\n    pass\n"),
        Invalid("import torch\nelements = len(weight.storage())\n"),
        Invalid("import torch\nweight = torch.ones(3)\nelements = len(weight.storage())\n",
                torch_warns="TypedStorage is deprecated"),
        Invalid("import torch\nfirst = self.weight.storage()[0]\n"),
    ]

    def check_method_call(self, ctx, call):
        if call.args or call.keywords:
            return
        receiver = call.func.value
        if isinstance(receiver, ast.Name) and receiver.id in _NOT_TENSORS:
            return
        if isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            return
        message = (f"`.storage()` returns a `TypedStorage`, deprecated since PyTorch {self.deprecated_in}; "
                   f"use `.untyped_storage()` (it counts bytes, not elements)")
        fix = None
        if self._used_only_as_buffer(ctx, call):
            end = ctx.end(call.func)
            fix = Fix(message="Use `.untyped_storage()` (same buffer, same answer here)",
                      edits=[Edit(end - len("storage"), end, "untyped_storage")], applicability=SAFE)
        yield ctx.diagnostic(call, message, fix)

    @staticmethod
    def _used_only_as_buffer(ctx, call: ast.Call) -> bool:
        statement = ctx.statement
        if statement is None:
            return False
        for node in ast.walk(statement):
            if isinstance(node, ast.Attribute) and node.value is call:
                if node.attr in SAME_ON_UNTYPED_ATTRIBUTES:
                    return True
                if node.attr in SAME_ON_UNTYPED:
                    return any(isinstance(parent, ast.Call) and parent.func is node and not parent.args
                               and not parent.keywords for parent in ast.walk(statement))
                return False
        return False
