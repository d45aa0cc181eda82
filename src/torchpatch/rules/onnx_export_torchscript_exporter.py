"""TP265: `torch.onnx.export(..., dynamo=False)`: the legacy TorchScript-based exporter (deprecated since 2.8)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules._onnx_calls import EXPORT, is_exported_program, model_argument
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: torch's DeprecationWarning on that branch (torch/onnx/__init__.py of the 2.8.0 … 2.15.0 wheels).
MESSAGE = ("You are using the legacy TorchScript-based ONNX export. Starting in PyTorch 2.9, the new "
           "torch.export-based ONNX exporter has become the default.")


class OnnxExportTorchscriptExporter(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(...)` calls that pass `dynamo=False` (or another literal that is not
    `True`), which select the TorchScript-based exporter, when the target is 2.8 or later. A model that
    is an `ExportedProgram` (`torch.export.export(...)`, `torch.export.load(...)`, a variable or
    parameter annotated so) is not reported: torch sends it to the torch.export-based exporter whatever
    `dynamo=` says.

    ## Why is this bad?
    `torch.onnx.export` tests `if dynamo is True or isinstance(model, ExportedProgram)` and otherwise
    warns `DeprecationWarning: You are using the legacy TorchScript-based ONNX export` before it
    imports the old exporter (2.8.0 … 2.15.0 wheels; the warning comes before `onnx` is imported, so
    it shows even where `onnx` is not installed). The old exporter's options (`dynamic_axes=`,
    `training=`, `operator_export_type=`, …) have `torch.export` counterparts: `dynamic_shapes=`, the
    model's own mode. Moving to `dynamo=True` changes how the graph is captured, so there is no fix.
    """

    code = "TP265"
    name = "onnx-export-torchscript-exporter"
    summary = "`torch.onnx.export(..., dynamo=False)`: the TorchScript-based exporter is deprecated (2.8)"
    deprecated_in = v("2.8")
    replacement_since = v("2.5")
    fix_safety_note = ("No fix: `dynamo=True` captures the model with `torch.export`, which needs "
                       "`dynamic_shapes=` instead of `dynamic_axes=` and may fail on data-dependent control flow.")
    references = ("https://docs.pytorch.org/docs/stable/onnx_export.html",)
    catalog_ids = ("onnx.dynamo-default",)
    calls = EXPORT
    torch_message = MESSAGE

    VALID = [
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        # An ExportedProgram takes the torch.export-based exporter whatever dynamo= says.
        'import torch\ndef save(model, x):\n    ep = torch.export.export(model, (x,), strict=False)\n'
        '    torch.onnx.export(ep, (x,), "m.onnx", dynamo=False, opset_version=18)\n',
        # Before 2.8 the TorchScript-based exporter was the supported default.
        Valid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=False, opset_version=17)\n', target_torch="2.7",
              min_torch="2.4"),
        # The fallback written out (what `fallback=True` did, TP102's fix): the handler runs only where the
        # torch.export-based exporter failed.
        'import torch\ntry:\n    torch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n'
        'except Exception:\n    torch.onnx.export(model, (x,), "m.onnx", dynamo=False, opset_version=18)\n',
        # A value the code does not spell out.
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=use_dynamo, opset_version=17)\n',
    ]
    INVALID = [
        Invalid('import io\nimport torch\nmodel = torch.nn.Linear(2, 2)\nx = torch.randn(1, 2)\n'
                'torch.onnx.export(model, (x,), io.BytesIO(), dynamo=False)\n',
                torch_warns=r"You are using the legacy TorchScript-based ONNX export"),
        Invalid('import torch\nfrom torch import onnx\nonnx.export(model, dummy, "m.onnx", dynamo=False,\n'
                '            dynamic_axes={"x": {0: "batch"}}, do_constant_folding=True)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.target < self.deprecated_in:
            return
        dynamo = keyword(call, "dynamo")
        if dynamo is None or not isinstance(dynamo.value, ast.Constant) or dynamo.value.value is True:
            return  # no dynamo= is TP410's (the default flipped in 2.9); a variable is not known
        if call.args and isinstance(call.args[0], ast.Starred):
            return  # export(*arguments, dynamo=False): the model could be an ExportedProgram
        model = model_argument(call)
        if model is not None and is_exported_program(ctx, model, call):
            return
        if _retries_the_new_exporter(ctx, call):
            return
        yield ctx.diagnostic(call, (
            f"`torch.onnx.export(..., dynamo={dynamo.value.value!r})` takes the TorchScript-based exporter, "
            f"deprecated since PyTorch 2.8 (warns in {ctx.target}): torch warns: {MESSAGE} "
            f"Use `dynamo=True` (with `dynamic_shapes=` for `dynamic_axes=`)"))


def _retries_the_new_exporter(ctx, call: ast.Call) -> bool:
    """The call sits in an ``except`` handler of a ``try`` that exports with ``dynamo=True``."""
    node, parent = call, ctx.parent_of(call)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if isinstance(parent, ast.ExceptHandler):
            attempt = ctx.parent_of(parent)
            if isinstance(attempt, ast.Try) and any(_exports_with_dynamo(ctx, n) for s in attempt.body
                                                    for n in ast.walk(s)):
                return True
        node, parent = parent, ctx.parent_of(parent)
    return False


def _exports_with_dynamo(ctx, node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
            and ctx.resolves_to(node.func) in EXPORT):
        return False
    dynamo = keyword(node, "dynamo")
    return dynamo is not None and isinstance(dynamo.value, ast.Constant) and dynamo.value.value is True
