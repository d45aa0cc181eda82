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
        model = model_argument(call)
        if model is not None and is_exported_program(ctx, model, call):
            return
        yield ctx.diagnostic(call, (
            f"`torch.onnx.export(..., dynamo={dynamo.value.value!r})` takes the TorchScript-based exporter, "
            f"deprecated since PyTorch 2.8 (warns in {ctx.target}): torch warns: {MESSAGE} "
            f"Use `dynamo=True` (with `dynamic_shapes=` for `dynamic_axes=`)"))
