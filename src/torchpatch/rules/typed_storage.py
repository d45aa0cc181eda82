"""TP223: the typed storage classes (torch.FloatStorage, torch.TypedStorage, …) are deprecated."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import in_annotation
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

#: The legacy typed storage classes of torch 2.13 (``dir(torch)``, ``dir(torch.cuda)``): all are
#: subclasses of ``torch.storage.TypedStorage`` and warn when created.
_TYPES = ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16",
          "ComplexFloat", "ComplexDouble")
_QUANTIZED = ("QUInt8", "QInt8", "QInt32", "QUInt4x2", "QUInt2x4")
TYPED_STORAGES = frozenset(
    [f"torch.{name}Storage" for name in (*_TYPES, *_QUANTIZED)]
    + [f"torch.cuda.{name}Storage" for name in _TYPES]
    + ["torch.TypedStorage", "torch.storage.TypedStorage", "torch.Storage"]
)
#: ``TypedStorage``'s private name from before it went public: absent from every wheel 2.4.1 … 2.15.0
#: (torch/storage.py, torch/__init__.py), so any use raises AttributeError.
GONE_PRIVATE_NAMES = frozenset({"torch.storage._TypedStorage", "torch._TypedStorage"})


class TypedStorage(Rule):
    """
    ## What it does
    Flags uses of the typed storage classes: `torch.TypedStorage`, the legacy per-dtype classes
    (`torch.FloatStorage`, `torch.ByteStorage`, …, `torch.Storage`) and their CUDA twins
    (`torch.cuda.FloatStorage`, …), and the old private name `torch.storage._TypedStorage`, which no
    release from 2.4 on has. There is no automatic fix.

    ## Why is this bad?
    Since PyTorch 2.0, `TypedStorage` is deprecated: creating one (or calling `tensor.storage()`, see
    TP224) warns "TypedStorage is deprecated. It will be removed in the future and UntypedStorage
    will be the only storage class" (`UserWarning`, once per process). The replacement,
    `torch.UntypedStorage` / `tensor.untyped_storage()`, is a plain byte buffer: its size, indexing,
    `tolist()` and `resize_()` count bytes, not elements, so code has to be adapted by hand. To build
    a tensor of a given dtype, create the tensor (`torch.empty(n, dtype=torch.float32)`) rather than
    a storage.
    """

    code = "TP223"
    torch_message = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                     "the only storage class. This should only matter to you if you are using storages "
                     "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                     "tensor.storage()")
    name = "typed-storage"
    summary = "`torch.FloatStorage`, `torch.TypedStorage`, … are deprecated (since 2.0): use tensors or `UntypedStorage`"
    deprecated_in = v("2.0")
    references = (
        "https://docs.pytorch.org/docs/stable/storage.html",
    )
    catalog_ids = ("ag.typed-storage",)
    references_to = TYPED_STORAGES | GONE_PRIVATE_NAMES

    VALID = [
        "import torch\nbuffer = torch.UntypedStorage(16)\n",
        "import torch\nx = torch.empty(4, dtype=torch.float32)\n",
        "import torch\nptr = x.untyped_storage().data_ptr()\n",
        # Look-alikes: another library's FloatStorage, a local class.
        "import torch\nfrom mylib import FloatStorage\nstore = FloatStorage(4)\n",
        "import torch\nclass FloatStorage:\n    pass\nstore = FloatStorage()\n",
        # Handling what torch itself still returns (``tensor.storage()`` is a TypedStorage in 2.13) is no use.
        "import torch as th\nif isinstance(obj, th.TypedStorage):\n    pass\n",
        "import torch\nok = isinstance(obj, (torch.storage.TypedStorage, torch.UntypedStorage))\n",
        # An annotation names the type a callback receives (allennlp's ``map_location`` function).
        "import torch\ndef to_device(storage: torch.Storage, location) -> torch.Storage:\n    return storage\n",
        "import torch\nlast: torch.TypedStorage = None\n",
        # lightning fabric/utilities/load.py rebuilds checkpoint storages the way torch.serialization does.
        "from torch.storage import TypedStorage\nstorage = TypedStorage(wrap_storage=uts, dtype=dtype, _internal=True)\n",
        # The private ``_from_buffer`` builds with ``_internal=True`` (no warning); torch.distributed's own
        # ``_object_to_tensor`` calls it in 2.15 (ColossalAI copies that helper).
        "import torch\nstorage = torch.ByteStorage._from_buffer(payload)\n",
    ]
    INVALID = [
        Invalid("import torch\nstore = torch.FloatStorage(4)\n"),
        Invalid("from torch.cuda import HalfStorage\nstore = HalfStorage(8)\n"),
        Invalid("from torch.storage import TypedStorage as TS\nstore = TS(4, dtype=dtype)\n"),
        Invalid("import torch\nstore = torch.storage.TypedStorage(4)\n"),
        Invalid("import torch\nstore = torch.storage._TypedStorage(4, dtype=torch.float32)\n"),
        Invalid("from torch.storage import _TypedStorage\nok = isinstance(s, _TypedStorage)\n"),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import:
            return  # reported where the name is used
        if reference.qualname in GONE_PRIVATE_NAMES:
            message = (f"`{reference.qualname}` does not exist in PyTorch 2.4 through {ctx.target} (AttributeError): it "
                       f"was `TypedStorage`'s private name; use tensors, or `torch.UntypedStorage` (which counts bytes)")
            yield ctx.diagnostic(reference.node, message)
            return
        if _is_type_test(ctx, reference.node) or in_annotation(reference) \
                or _is_internal_construction(ctx, reference.node) or _is_private_from_buffer(ctx, reference.node):
            return  # torch itself still hands out TypedStorage (``tensor.storage()``): naming its type uses nothing
        name = reference.qualname
        message = (f"`{name}` is a typed storage, deprecated since PyTorch {self.deprecated_in}; use tensors, "
                   f"or `torch.UntypedStorage` (which counts bytes, not elements)")
        yield ctx.diagnostic(reference.node, message)


def _is_type_test(ctx, node) -> bool:
    """The class argument of ``isinstance``/``issubclass`` (alone or in a tuple), or an ``except`` type."""
    parent = ctx.parent_of(node)
    if type(parent) is ast.Tuple:
        node, parent = parent, ctx.parent_of(parent)
    if type(parent) is ast.Call and type(parent.func) is ast.Name and parent.func.id in ("isinstance", "issubclass"):
        return len(parent.args) == 2 and parent.args[1] is node
    return False


def _is_internal_construction(ctx, node) -> bool:
    """``TypedStorage(..., _internal=True)``: rebuilding the storages torch's own checkpoint format
    holds (what ``torch.serialization`` does, and lightning's lazy loader), not a use of the API."""
    parent = ctx.parent_of(node)
    return type(parent) is ast.Call and parent.func is node and any(
        k.arg == "_internal" and type(k.value) is ast.Constant and k.value.value is True for k in parent.keywords)


def _is_private_from_buffer(ctx, node) -> bool:
    """``torch.ByteStorage._from_buffer(...)``: the private constructor behind ``from_buffer`` builds the
    storage with ``TypedStorage(..., _internal=True)`` in every wheel 2.4.1 … 2.15.0, so it never warns,
    and torch.distributed's ``_object_to_tensor`` itself still calls it in 2.15 (the public
    ``from_buffer`` warns first, and stays reported)."""
    parent = ctx.parent_of(node)
    return type(parent) is ast.Attribute and parent.value is node and parent.attr == "_from_buffer" \
        and type(ctx.parent_of(parent)) is ast.Call and ctx.parent_of(parent).func is parent
