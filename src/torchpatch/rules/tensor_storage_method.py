"""TP224: tensor.storage() / storage_type() on a known tensor (TypedStorage is deprecated); TP906 has the rest."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.rules.typed_storage import TypedStorage
from torchpatch.versions import v

#: Members that give the same answer on a TypedStorage and on the tensor's UntypedStorage (both
#: read the same byte buffer): ``x.storage().data_ptr()`` == ``x.untyped_storage().data_ptr()``.
SAME_ON_UNTYPED = frozenset({"data_ptr", "nbytes", "is_shared", "is_pinned"})
SAME_ON_UNTYPED_ATTRIBUTES = frozenset({"device", "is_cuda"})
_NOT_TENSORS = frozenset({"self", "cls", "super"})


class TensorStorageMethod(Rule):
    """
    ## What it does
    Flags zero-argument `.storage()` and `.storage_type()` calls on objects known to be tensors: built
    by a torch factory (`torch.randn`, `torch.tensor`, `nn.Parameter`, ...), names bound only to one or
    annotated `torch.Tensor`, loop variables over `model.parameters()`, `.data`/`.grad` of those and
    `.weight`/`.bias` of a `torch.nn` module built in the same function (how receivers are inferred:
    `rules/_receivers.py`). The same calls on objects of unknown type are TP906 (opt-in): other
    libraries have `.storage()` methods too.

    Where the storage is only asked for something a byte buffer answers identically
    (`.data_ptr()`, `.nbytes()`, `.is_shared()`, `.is_pinned()`, `.device`, `.is_cuda`), the fix
    switches to `.untyped_storage()`; other uses are reported without a fix.

    ## Why is this bad?
    `Tensor.storage()` returns a `TypedStorage`, deprecated since PyTorch 2.0 (`UserWarning`:
    "TypedStorage is deprecated", once per process); `Tensor.storage_type()` warns the same. Its
    replacement `Tensor.untyped_storage()` returns the same memory as bytes: `len()`, `size()`,
    indexing, `tolist()`, `resize_()` and `copy_()` count bytes instead of elements, so a blind rename
    would silently change results (a float32 tensor of 3 elements has a storage of size 3 but an
    untyped storage of size 12).
    """

    code = "TP224"
    torch_message = TypedStorage.torch_message  # the one warning every TypedStorage path gives
    name = "tensor-storage-method"
    summary = "`tensor.storage()` on a known tensor returns a deprecated `TypedStorage` (since 2.0); use `untyped_storage()`"
    deprecated_in = v("2.0")
    replacement_since = v("2.0")
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
    methods = frozenset({"storage", "storage_type"})

    VALID = [
        "import torch\nptr = x.untyped_storage().data_ptr()\n",
        "import torch\nclass Holder:\n    def size(self):\n        return len(self.storage())\n",
        "import torch\nbucket = client.storage(\"bucket-name\")\n",
        # A tensor rebound to something else: unknown (TP906's, opt-in).
        "import torch\nx = torch.ones(3)\nx = load()\nptr = x.untyped_storage()\n",
        Valid("import torch\nx = torch.ones(3)\nptr = x.untyped_storage().data_ptr()\n", torch_runs_clean=True),
        # A file without torch: never looked at.
        Valid("store = x.storage()\n"),
    ]
    INVALID = [
        Invalid("import torch\nweight = torch.ones(3)\nelements = len(weight.storage())\n",
                torch_warns="TypedStorage is deprecated"),
        Invalid("import torch\nx = torch.randn(3)\nkind = x.storage_type()\n", torch_warns="TypedStorage is deprecated"),
        Invalid("import torch\ndef share(t: torch.Tensor):\n    return t.storage().data_ptr()\n",
                fixed="import torch\ndef share(t: torch.Tensor):\n    return t.untyped_storage().data_ptr()\n"),
        Invalid("import torch\nmodel = torch.nn.Linear(2, 2)\nfor p in model.parameters():\n    print(p.data.storage().is_shared())\n",
                fixed="import torch\nmodel = torch.nn.Linear(2, 2)\nfor p in model.parameters():\n"
                      "    print(p.data.untyped_storage().is_shared())\n"),
        Invalid("import torch\nlayer = torch.nn.Linear(2, 2)\nsize = layer.weight.storage().size()\n",
                torch_warns="TypedStorage is deprecated"),
    ]

    def known_receiver(self, ctx, receiver: ast.expr) -> bool:
        return receivers.is_tensor(ctx, receiver)

    def check_method_call(self, ctx, call):
        if call.args or call.keywords:
            return
        receiver = call.func.value
        if not self.known_receiver(ctx, receiver):
            return
        if isinstance(receiver, ast.Name) and receiver.id in _NOT_TENSORS:
            return
        if isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            return
        if call.func.attr == "storage_type":
            yield ctx.diagnostic(call, f"`.storage_type()` reads a `TypedStorage`, deprecated since PyTorch "
                                       f"{self.deprecated_in}; use `.dtype` (and `.untyped_storage()` for the memory)")
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
