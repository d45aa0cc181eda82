"""TP237: `torch.onnx.export` writing to an `io.BytesIO`, deprecated with the torch.export-based exporter since 2.9."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import enclosing_def_or_module
from torchpatch.rules._helpers import argument
from torchpatch.rules._onnx_calls import EXPORT, takes_new_exporter
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

_BYTES_IO = "io.BytesIO"


class OnnxExportBytesio(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(model, args, f)` whose `f` is an `io.BytesIO`: built in the call, or a
    name bound to `io.BytesIO(...)` in the same function (an assignment or a `with` target), when
    the call takes the `torch.export`-based exporter (`dynamo=True`, or no `dynamo=` on 2.9+).

    ## Why is this bad?
    From PyTorch 2.9 the `torch.export`-based exporter warns `DeprecationWarning: Saving ONNX model
    to a BytesIO object is deprecated. Please use a file path instead.` (`export_compat` in
    `torch/onnx/_internal/exporter/_compat.py`, 2.9.1 … 2.15.0 wheels), and keeps it only "for
    legacy export compatibility". Write to a path, or leave `f` out and use the returned
    `ONNXProgram`: `program.model_proto.SerializeToString()` gives the same bytes in memory.
    The TorchScript-based exporter (`dynamo=False`) does not warn.
    """

    code = "TP237"
    name = "onnx-export-bytesio"
    summary = "`torch.onnx.export(..., io.BytesIO())` (deprecated since 2.9 with the torch.export-based exporter)"
    deprecated_in = v("2.9")
    fix_safety_note = "No fix: the bytes come from the returned `ONNXProgram` instead, a change to the code around the call."
    references = ("https://docs.pytorch.org/docs/stable/onnx_export.html",)
    catalog_ids = ("onnx.bytesio-deprecated",)
    calls = EXPORT

    VALID = [
        'import torch\nprogram = torch.onnx.export(model, (x,), dynamo=True, opset_version=20)\n'
        'data = program.model_proto.SerializeToString()\n',
        'import io\nimport torch\nbuffer = io.BytesIO()\n'
        'torch.onnx.export(model, (x,), buffer, dynamo=False, opset_version=17)  # noqa: TP265 (the deprecated exporter, on purpose)\n',
        'import io\nimport torch\nbuffer = io.StringIO()\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        # A BytesIO of another function.
        'import io\nimport torch\ndef read():\n    f = io.BytesIO()\n    return f\n'
        'torch.onnx.export(model, (x,), f, dynamo=True, opset_version=18)\n',
    ]
    INVALID = [
        Invalid('import io\nimport torch\nbuffer = io.BytesIO()\n'
                'torch.onnx.export(model, (x,), buffer, dynamo=True, opset_version=18)\n'),
        Invalid('import io\nimport torch\ndef to_bytes(model, x):\n    with io.BytesIO() as f:\n'
                '        torch.onnx.export(model, (x,), f, opset_version=20)\n        return f.getvalue()\n',
                min_torch="2.9"),
        Invalid('from io import BytesIO\nimport torch\ntorch.onnx.export(model, (x,), f=BytesIO(), dynamo=True, opset_version=18)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        found = argument(call, "f", 2)
        if found is None or not takes_new_exporter(ctx, call, ctx.target):
            return
        node, value = found
        if not (self._is_bytes_io(ctx, value) or
                (isinstance(value, ast.Name) and self._bound_to_bytes_io(ctx, call, value.id))):
            return
        yield ctx.diagnostic(node, (
            f"`torch.onnx.export` into an `io.BytesIO` is deprecated since PyTorch {self.deprecated_in} "
            "(DeprecationWarning with the torch.export-based exporter); write to a path or use the returned "
            "`ONNXProgram` (`program.model_proto.SerializeToString()`)"))

    @staticmethod
    def _is_bytes_io(ctx, value) -> bool:
        return isinstance(value, ast.Call) and ctx.resolves_to(value.func) == _BYTES_IO

    def _bound_to_bytes_io(self, ctx, call, name: str) -> bool:
        scope = enclosing_def_or_module(ctx, call)
        for node in _walk_own_scope(scope):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                if self._is_bytes_io(ctx, node.value):
                    return True
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    target = item.optional_vars
                    if isinstance(target, ast.Name) and target.id == name and self._is_bytes_io(ctx, item.context_expr):
                        return True
        return False




def _walk_own_scope(scope: ast.AST):
    """The scope's nodes, without the bodies of functions and classes defined inside it."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))
