"""TP236: TorchScript-only options of `torch.onnx.export` passed to the torch.export-based exporter, which ignores them."""

from __future__ import annotations

from torchpatch.rules._onnx_calls import EXPORT, takes_new_exporter
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v

#: keyword -> (the first release whose docstring calls it deprecated, what to do instead), from
#: torch/onnx/__init__.py of the 2.5.1 and 2.6.0 wheels ("Deprecated option"; ".. versionchanged:: 2.6").
LEGACY_OPTIONS: dict[str, tuple[Version, str]] = {
    "training": (v("2.5"), "call `model.train()` or `model.eval()` before exporting"),
    "operator_export_type": (v("2.5"), "only ONNX is supported"),
    "do_constant_folding": (v("2.5"), "the exported graph is always optimized"),
    "export_modules_as_functions": (v("2.5"), "drop it"),
    "custom_opsets": (v("2.6"), "drop it; register custom ops with `custom_translation_table=`"),
    "autograd_inlining": (v("2.6"), "drop it"),
}


class OnnxExportLegacyOptions(Rule):
    """
    ## What it does
    Flags `training=`, `operator_export_type=`, `do_constant_folding=`, `custom_opsets=`,
    `export_modules_as_functions=` and `autograd_inlining=` in `torch.onnx.export(...)` calls that
    take the `torch.export`-based exporter: `dynamo=True`, or no `dynamo=` when the target is 2.9
    or later. With `dynamo=False` the options still work (that exporter is TP410's business).

    ## Why is this bad?
    The options belong to the TorchScript-based exporter. The `dynamo=True` branch of
    `torch.onnx.export` does not pass them on (2.5.1 … 2.15.0 wheels; from 2.9 they reach only the
    `fallback=True` retry with the old exporter), so `operator_export_type=ONNX_ATEN_FALLBACK` or
    `training=TrainingMode.TRAINING` silently does nothing. The docstring calls them deprecated:
    `training`, `operator_export_type`, `do_constant_folding` and `export_modules_as_functions` from
    2.5, `custom_opsets` and `autograd_inlining` from 2.6.
    """

    code = "TP236"
    name = "onnx-export-legacy-options"
    summary = "TorchScript-only `torch.onnx.export` options with the torch.export-based exporter (ignored; deprecated 2.5/2.6)"
    deprecated_in = v("2.5")
    fix_safety_note = (
        "No fix: dropping an option is the same only where it was ignored, and `training=` says a mode the model "
        "should be put in before the call."
    )
    references = ("https://docs.pytorch.org/docs/stable/onnx_export.html",)
    catalog_ids = ("onnx.legacy-params",)
    calls = EXPORT

    VALID = [
        'import torch\nmodel.eval()\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=False, opset_version=17, do_constant_folding=True)  # noqa: TP265 (the deprecated exporter, on purpose)\n',
        Valid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", do_constant_folding=True)\n', target_torch="2.8",
              min_torch="2.8"),
    ]
    INVALID = [
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18,\n'
                '                  operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK)\n'),
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", opset_version=20, do_constant_folding=True)\n',
                min_torch="2.9"),
    ]

    def check_call(self, ctx, call, qualname):
        if not takes_new_exporter(ctx, call, ctx.target):
            return
        for item in call.keywords:
            option = LEGACY_OPTIONS.get(item.arg or "")
            if option is None or option[0] > ctx.target:
                continue
            since, instead = option
            yield ctx.diagnostic(item, (
                f"`torch.onnx.export(..., {item.arg}=)` is deprecated since PyTorch {since} and ignored by the "
                f"torch.export-based exporter (`dynamo=True`, the default from 2.9); {instead}"))
