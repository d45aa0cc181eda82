"""TP266: a uint8 tensor used as a mask (indexing, ``torch.where``, ``masked_fill``): deprecated, or an error."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchpatch.rules import _receivers as receivers
from torchpatch.rules._file_scan import enclosing_def_or_module
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: Mask methods of a tensor whose first argument must be a bool tensor: torch 2.4 to 2.15 raise on a
#: uint8 mask ("masked_fill_ only supports boolean masks", "masked_select: expected BoolTensor for mask").
_MASK_METHODS = frozenset({"masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"})
_UINT8 = frozenset({"torch.uint8"})
_BYTE_TENSOR_TYPES = frozenset({"torch.ByteTensor", "torch.cuda.ByteTensor"})
#: Factories that make a uint8 tensor when given ``dtype=torch.uint8``.
_FACTORIES = frozenset(f"torch.{name}" for name in (
    "zeros", "ones", "empty", "full", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like"))

_INDEX_MESSAGE = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
_WHERE_MESSAGE = ("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                  "future version of PyTorch. Use a boolean condition instead.")


class Uint8Mask(Rule):
    """
    ## What it does
    Flags a tensor made uint8 in the code (`.byte()`, `.to(torch.uint8)`, `.type(torch.ByteTensor)`,
    `torch.ByteTensor(...)`, a factory with `dtype=torch.uint8`) and
    then used as a mask: as an index (`x[mask]`, `x[mask] = 0`), as the condition of `torch.where`, or as
    the mask of `masked_fill`, `masked_select` or `masked_scatter`. The uint8 tensor is the call itself or a
    name bound once, in the same function, to such a call.

    ## Why is this bad?
    Byte masks are from before PyTorch 1.2, when comparisons returned uint8. Reading `x[mask]` and
    `torch.where(mask, a, b)` with a uint8 mask still works but warns ("indexing with dtype torch.uint8 is now
    deprecated", "where received a uint8 condition tensor"), and a uint8 index is read as a mask only by
    this deprecated path. Writing `x[mask] = v`, `masked_fill`, `masked_select` and `masked_scatter` with a
    uint8 mask raise `RuntimeError` in every release from 2.4 to 2.15 ("masked_fill_ only supports boolean masks";
    the same messages are in libtorch of 2.4, 2.10, 2.13 and 2.15).
    Comparisons give bool tensors, so the conversion is usually not needed at all; `.bool()` keeps the meaning
    of a 0/1 mask.

    ## Example
    ```python
    mask = (tokens != pad).byte()
    hidden = hidden.masked_fill(mask, 0.0)
    ```
    Use instead:
    ```python
    mask = tokens != pad
    hidden = hidden.masked_fill(mask, 0.0)
    ```
    """

    code = "TP266"
    name = "uint8-mask"
    summary = "a uint8 (byte) tensor used as a mask: deprecated for indexing and `torch.where`, an error for `masked_fill`"
    deprecated_in = v("2.4")  # and long before: bool masks since PyTorch 1.2
    torch_message = _INDEX_MESSAGE
    fix_safety_note = (
        "No fix: whether the tensor is really a 0/1 mask (then `.bool()`) or holds other byte values is not "
        "known from the code."
    )
    references = ("https://docs.pytorch.org/docs/stable/tensor_attributes.html#torch.dtype",)
    # Triggered by `.byte()` and by a mention of torch.uint8 / ByteTensor (not by every `.to(`).
    methods = frozenset({"byte"})
    references_to = _UINT8 | _BYTE_TENSOR_TYPES

    @classmethod
    def torch_messages(cls) -> tuple[str, ...]:
        return (_INDEX_MESSAGE, _WHERE_MESSAGE)

    VALID = [
        "import torch\nmask = (x > 0)\ny = x[mask]\n",
        "import torch\nimage = frame.byte()\nsave(image)\n",
        "import torch\npixels = img.to(torch.uint8)\nrow = pixels[0]\n",
        "import torch\nmask = x.byte()\nmask = mask.bool()\ny = x[mask]\n",
        Valid("import torch\nx = torch.randn(4)\nmask = (x > 0).byte()\ny = x[mask.bool()]\n"
              "z = x.masked_fill(mask.bool(), 0.0)\n", torch_runs_clean=True),
        Valid("import torch\nimg = torch.zeros(3, 8, 8, dtype=torch.uint8)\nimg[0] = 255\nflat = img.float() / 255\n",
              torch_runs_clean=True),
        Valid("import torch\nx = torch.randn(4)\nlabels = x.byte()\ncounts = torch.bincount(labels.long())\n",
              torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\nx = torch.randn(4)\nmask = (x > 0).byte()\npicked = x[mask]\n",
                torch_warns="indexing with dtype torch.uint8 is now deprecated"),
        Invalid("import torch\nx = torch.randn(4)\nkeep = x > 0\nchosen = torch.where(keep.to(torch.uint8), x, x * 0)\n",
                torch_warns="where received a uint8 condition tensor"),
        Invalid("import torch\nx = torch.randn(4)\nmask = (x > 0).type(torch.ByteTensor)\ny = x.masked_fill(mask, 0.0)\n",
                torch_warns="masked_fill_ only supports boolean masks"),
        Invalid("import torch\ndef pad_out(h, tokens, pad):\n    mask = (tokens == pad).byte()\n"
                "    h[mask] = 0\n    return h\n"),
        Invalid("import torch\nx = torch.randn(2, 3)\nmask = torch.zeros(2, 3, dtype=torch.uint8)\n"
                "mask[0, 1] = 1\nout = torch.where(mask, x, torch.zeros_like(x))\n",
                torch_warns="where received a uint8 condition tensor"),
        Invalid("import torch\ndef lengths_to_mask(lengths, n):\n    mask = torch.ByteTensor(len(lengths), n).fill_(1)\n"
                "    return scores.masked_fill(mask, -1e9)\n"),
        Invalid("import torch\nx = torch.randn(4)\nsel = x.masked_select((x > 0).to(dtype=torch.uint8))\n",
                torch_warns="masked_select: expected BoolTensor for mask"),
    ]

    def check_method_call(self, ctx, call):
        if call.func.attr == "byte" and not call.args and not call.keywords:
            yield from self._check_uint8(ctx, call)

    def check_reference(self, ctx, reference):
        if reference.in_import:
            return
        call = _uint8_call(ctx, reference.node)
        if call is not None:
            yield from self._check_uint8(ctx, call)

    def _check_uint8(self, ctx, call: ast.Call):
        call, parent = _through_dtype_keeping_calls(ctx, call)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            for use in _uses_as_mask(ctx, enclosing_def_or_module(ctx, call), parent.targets[0].id):
                yield self._diagnostic(ctx, use)
            return
        if _mask_use(ctx, call, parent) is not None:
            yield self._diagnostic(ctx, _mask_use(ctx, call, parent))

    def _diagnostic(self, ctx, use: ast.AST):
        if isinstance(use, ast.Subscript):
            if isinstance(use.ctx, ast.Store):
                what = f"writing through it raises `RuntimeError` (PyTorch 2.4 to {ctx.target})"
            else:
                what = f"indexing with it is deprecated (warns in PyTorch 2.4 to {ctx.target})"
        elif isinstance(use, ast.Call) and isinstance(use.func, ast.Attribute) and use.func.attr in _MASK_METHODS:
            what = f"`{use.func.attr}` raises `RuntimeError` on it (bool masks only; PyTorch 2.4 to {ctx.target})"
        else:
            what = f"`torch.where` with a uint8 condition is deprecated (warns in PyTorch 2.4 to {ctx.target})"
        return ctx.diagnostic(use, f"a uint8 tensor used as a mask: {what}; use a bool tensor "
                                   f"(comparisons already give one, or `.bool()`)")


def _uint8_call(ctx, node: ast.AST) -> ast.Call | None:
    """The call that makes a uint8 tensor with this mention of torch.uint8 / ByteTensor, if it is one:
    ``t.to(torch.uint8)``, ``t.to(dtype=torch.uint8)``, ``t.type(torch.ByteTensor)``, ``torch.ByteTensor(n)``,
    ``torch.zeros(n, dtype=torch.uint8)``."""
    parent = ctx.parent_of(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        return parent if ctx.resolves_to(node) in _BYTE_TENSOR_TYPES else None
    if isinstance(parent, ast.keyword) and parent.arg == "dtype":
        call = ctx.parent_of(parent)
        if isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute)):
            if isinstance(call.func, ast.Attribute) and call.func.attr == "to" or ctx.resolves_to(call.func) in _FACTORIES:
                return call
        return None
    if isinstance(parent, ast.Call) and node in parent.args and len(parent.args) == 1 and not parent.keywords \
            and isinstance(parent.func, ast.Attribute) and parent.func.attr in ("to", "type"):
        return parent
    return None


#: Tensor methods whose result has the receiver's dtype (``torch.ByteTensor(n, m).fill_(1)``).
_KEEP_DTYPE = frozenset({"fill_", "zero_", "cuda", "cpu", "contiguous", "clone", "detach", "unsqueeze", "squeeze",
                         "view", "reshape", "expand", "expand_as", "flip", "t", "transpose", "permute", "repeat"})


def _through_dtype_keeping_calls(ctx, expr: ast.expr) -> tuple[ast.expr, ast.AST | None]:
    """``expr`` extended through calls of methods that keep its dtype, and the parent of the result."""
    parent = ctx.parent_of(expr)
    while isinstance(parent, ast.Attribute) and parent.attr in _KEEP_DTYPE:
        call = ctx.parent_of(parent)
        if not (isinstance(call, ast.Call) and call.func is parent):
            break
        expr, parent = call, ctx.parent_of(call)
    return expr, parent


def _mask_use(ctx, expr: ast.expr, parent: ast.AST | None) -> ast.AST | None:
    """The node where ``expr`` is used as a mask, when it is: ``x[expr]``, ``torch.where(expr, ...)``,
    ``x.masked_fill(expr, ...)``."""
    if isinstance(parent, ast.Subscript) and parent.slice is expr:
        return parent
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is expr:
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr in _MASK_METHODS:
            return parent
        if isinstance(func, (ast.Name, ast.Attribute)) and ctx.resolves_to(func) == "torch.where" \
                and len(parent.args) + len(parent.keywords) == 3:
            return parent
    return None


def _uses_as_mask(ctx, scope_node: ast.AST, name: str) -> Iterator[ast.AST]:
    """Mask uses of ``name`` in its scope, when the name is bound there once (the uint8 call) and nowhere else."""
    bindings = 0
    uses: list[ast.AST] = []
    for node in receivers.walk_scope(scope_node):
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Store):
                bindings += 1
            else:
                use = _mask_use(ctx, node, ctx.parent_of(node))
                if use is not None:
                    uses.append(use)
        elif receivers.rebinds(node, name):
            bindings += 2
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(argument, ast.arg) and argument.arg == name for argument in ast.walk(scope_node.args)):
        bindings += 2
    if bindings == 1:
        yield from sorted(uses, key=lambda node: (node.lineno, node.col_offset))
