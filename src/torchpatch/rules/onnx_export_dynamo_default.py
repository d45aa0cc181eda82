"""TP410: torch.onnx.export without dynamo= (the default became True in 2.9)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_double_star, keyword
from torchpatch.rules._onnx_calls import is_exported_program, model_argument
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: ``dynamo`` was the 17th positional parameter of ``torch.onnx.export`` in PyTorch 2.4.
_DYNAMO_POSITION = 16



class OnnxExportDynamoDefault(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(...)` calls that do not pass `dynamo=`, when the code must also run on
    releases before 2.9 (your minimum torch is below 2.9).

    ## Why is this bad?
    PyTorch 2.9 changed the default of `torch.onnx.export` from `dynamo=False` (the
    TorchScript-based exporter) to `dynamo=True` (the `torch.export`-based exporter, which needs the
    `onnxscript` package and returns an `ONNXProgram`). The same call now traces the model
    differently, may fail on models the old exporter handled (and the reverse), and produces a
    different graph and default opset. `dynamic_axes=` belongs to the old exporter: with
    `dynamo=True` it is converted to `dynamic_shapes` on a best-effort basis, so prefer
    `dynamic_shapes=` with the new one. Say which exporter you mean.

    There is no fix: `dynamo=False` would keep the old exporter on every release, but from 2.8 that
    path is itself deprecated (a `DeprecationWarning`, TP265), so pinning it writes a call torch warns
    on. Migrating to `dynamo=True` (with `dynamic_shapes=`) is the answer.

    ## Which working code changes behaviour
    Every `torch.onnx.export(...)` call without `dynamo=` that ran on 2.4–2.8: on 2.9+ the same call
    runs the `torch.export`-based exporter, which traces differently, needs `onnxscript` and can
    fail where the old one worked. Reported when the code must run on both sides of 2.9.
    """

    code = "TP410"
    name = "onnx-export-dynamo-default"
    summary = "`torch.onnx.export` without `dynamo=` (default became True in 2.9)"
    changed_in = v("2.9")
    replacement_since = v("2.4")
    fix_safety_note = (
        "No fix: `dynamo=False` pins the TorchScript-based exporter that 2.4–2.8 used by default, which is "
        "deprecated since 2.8 (TP265); review whether `dynamo=True` (with `dynamic_shapes=`) does what you need."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/onnx_export.html",
        "https://docs.pytorch.org/docs/stable/onnx.html",
    )
    catalog_ids = ("onnx.dynamo-default",)
    calls = frozenset({"torch.onnx.export"})

    VALID = [
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=False, opset_version=17)  # noqa: TP265 (the deprecated exporter, on purpose)\n',
        'import torch\nopts = {"dynamo": True}\ntorch.onnx.export(model, (x,), "m.onnx", **opts)\n',
        Valid('import torch\nonnx_program = torch.onnx.export(model, (x,))\n', min_torch="2.9"),
        'import tf2onnx\ntf2onnx.export(model, "m.onnx")\n',
        'class Exporter:\n    def run(self):\n        self.onnx.export(self.model, "m.onnx")\n',
        # An ExportedProgram takes the torch.export-based exporter whatever `dynamo` says (2.5+).
        'import torch\nep = torch.export.export(model, (x,), strict=False)\ntorch.onnx.export(ep, (x,), "m.onnx", opset_version=18)\n',
        'import torch\ndef save(path):\n    program = torch.export.load(path)\n    torch.onnx.export(program, f="m.onnx", opset_version=18)\n',
        # The same, through run_decompositions(), an annotation or the model= keyword.
        'import torch\ndef save(model, x):\n    ep = torch.export.export(model, (x,), strict=False)\n'
        '    ep = ep.run_decompositions()\n    torch.onnx.export(ep, (x,), "m.onnx", opset_version=18)\n',
        'import torch\nfrom torch.export import ExportedProgram\ndef save(ep: ExportedProgram, x):\n'
        '    torch.onnx.export(ep, (x,), "m.onnx", opset_version=18)\n',
        'import torch\ndef save(model, x):\n    torch.onnx.export(torch.export.export(model, (x,), strict=False)'
        '.run_decompositions(), (x,), "m.onnx", opset_version=18)\n',
        'import torch\ndef save(model, x):\n    torch.onnx.export(model=torch.export.export(model, (x,), strict=False), '
        'args=(x,), f="m.onnx", opset_version=18)\n',
    ]
    INVALID = [
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx")\n'),
        Invalid('import torch as th\nth.onnx.export(model, (x,), "m.onnx", input_names=["x"],\n'
                '               dynamic_axes={"x": {0: "batch"}})\n'),
        Invalid('import torch\nep = torch.export.export(model, (x,), strict=False)\nep = ep.module()\n'
                'torch.onnx.export(ep, (x,), "m.onnx")\n'),
        Invalid('from torch.onnx import export\nexport(model, x, "m.onnx", True, False)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.min_torch >= self.changed_in:
            return  # the code only runs where dynamo=True is the default
        if keyword(call, "dynamo") is not None or keyword(call, "fallback") is not None or has_double_star(call):
            return  # fallback= is TP102's
        if any(isinstance(argument, ast.Starred) for argument in call.args) or len(call.args) > _DYNAMO_POSITION:
            return
        model = model_argument(call)
        if model is not None and is_exported_program(ctx, model, call):
            return
        message = (f"`torch.onnx.export` without `dynamo=`: the default became `dynamo=True` (the torch.export-based "
                   f"exporter) in PyTorch {self.changed_in}; your minimum is {ctx.min_torch}")
        dynamic_axes = keyword(call, "dynamic_axes")
        # `dynamic_axes=None` is the default: torch.export's path (2.9-2.15 `_compat.export_compat`)
        # only converts or warns about a `dynamic_axes` that is not None.
        if dynamic_axes is not None and not (isinstance(dynamic_axes.value, ast.Constant)
                                             and dynamic_axes.value.value is None):
            message += "; `dynamic_axes` is meant for `dynamo=False` (use `dynamic_shapes` with dynamo=True)"
        # No `dynamo=False` fix: that exporter warns as deprecated from 2.8 (TP265), before the flip.
        yield ctx.diagnostic(call, message + "; pass `dynamo=True` (`dynamo=False` is deprecated since 2.8)")
