"""TP103: positional arguments after `f` in torch.onnx.export (keyword-only since 2.5)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: The parameters after ``f`` of ``torch.onnx.export`` in PyTorch 2.4 (torch/onnx/utils.py), in order.
#: Every one of them is still accepted as a keyword in 2.5 through 2.15.
PARAMETERS_2_4 = (
    "export_params", "verbose", "training", "input_names", "output_names", "operator_export_type",
    "opset_version", "do_constant_folding", "dynamic_axes", "keep_initializers_as_inputs", "custom_opsets",
    "export_modules_as_functions", "autograd_inlining", "dynamo",
)
POSITIONAL = 3  # model, args, f


class OnnxExportPositionalArgs(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(model, args, f, ...)` calls that pass more than three positional
    arguments, and names them.

    ## Why is this bad?
    Up to PyTorch 2.4, `torch.onnx.export(model, args, f, export_params, verbose, training, ...)`
    took every parameter positionally. Since 2.5 every parameter after `f` is keyword-only, so
    `torch.onnx.export(model, x, "m.onnx", True, False)` raises `TypeError: export() takes from 1 to
    3 positional arguments but 5 were given`. The fix names each extra argument by the 2.4 parameter
    order (`export_params`, `verbose`, `training`, `input_names`, `output_names`,
    `operator_export_type`, `opset_version`, `do_constant_folding`, `dynamic_axes`,
    `keep_initializers_as_inputs`, `custom_opsets`, `export_modules_as_functions`,
    `autograd_inlining`, `dynamo`); 2.4 accepts the same names as keywords, so it is safe.
    """

    code = "TP103"
    name = "onnx-export-positional-args"
    summary = "Positional arguments after `f` in `torch.onnx.export` (keyword-only since 2.5)"
    removed_in = v("2.5")
    replacement_since = v("2.4")
    fix_safety = SAFE
    fix_safety_note = "The keywords name the same parameters in 2.4 (positional-or-keyword) and 2.5+ (keyword-only)."
    references = (
        "https://docs.pytorch.org/docs/2.4/onnx_torchscript.html#torch.onnx.export",
        "https://docs.pytorch.org/docs/stable/onnx_export.html",
    )
    catalog_ids = ("onnx.export-kwonly",)
    calls = frozenset({"torch.onnx.export"})

    VALID = [
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", export_params=True, dynamo=False, opset_version=17)  # noqa: TP265 (the deprecated exporter, on purpose)\n',
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", *extra, dynamo=False, opset_version=17)  # noqa: TP265 (the deprecated exporter, on purpose)\n',
        'import torch\ntorch.onnx.export(model, (x,), dynamo=True, opset_version=18)\n',
        'import keras2onnx\nkeras2onnx.export(model, x, "m.onnx", True, False)\n',
    ]
    INVALID = [
        Invalid('import torch\ntorch.onnx.export(model, x, "m.onnx", True, False, dynamo=False)\n',
                fixed='import torch\ntorch.onnx.export(model, x, "m.onnx", export_params=True, verbose=False, dynamo=False)\n'),
        Invalid('from torch.onnx import export\nexport(\n    model,\n    x,\n    "m.onnx",\n    True,\n    False,\n'
                '    torch.onnx.TrainingMode.EVAL,\n    ["input"],\n    dynamo=False,\n)\n',
                fixed='from torch.onnx import export\nexport(\n    model,\n    x,\n    "m.onnx",\n    export_params=True,\n'
                      '    verbose=False,\n    training=torch.onnx.TrainingMode.EVAL,\n    input_names=["input"],\n'
                      '    dynamo=False,\n)\n'),
        Invalid('import torch\ntorch.onnx.export(model, x, "m.onnx", True, verbose=True, dynamo=False)\n',
                fixed='import torch\ntorch.onnx.export(model, x, "m.onnx", export_params=True, verbose=True, dynamo=False)\n'),
        Invalid('import torch\ntorch.onnx.export(model, x, "m.onnx", True, False, export_params=True, dynamo=False)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        positional = []
        for argument in call.args:
            if isinstance(argument, ast.Starred):
                break
            positional.append(argument)
        if len(positional) <= POSITIONAL:
            return
        extra = positional[POSITIONAL:]
        message = (f"`torch.onnx.export` takes at most {POSITIONAL} positional arguments since PyTorch "
                   f"{self.removed_in} (TypeError): pass the {len(extra)} after `f` by keyword")
        yield ctx.diagnostic(call, message, self._fix(ctx, call, positional))

    def _fix(self, ctx, call, positional):
        if len(positional) != len(call.args) or len(positional) > POSITIONAL + len(PARAMETERS_2_4):
            return None
        names = PARAMETERS_2_4[:len(positional) - POSITIONAL]
        if any(keyword(call, name) is not None for name in names):
            return None  # a duplicate argument: the call was already broken
        edits = [Edit(ctx.start(node), ctx.start(node), f"{name}=")
                 for name, node in zip(names, positional[POSITIONAL:])]
        return Fix(message="Pass the arguments after `f` by keyword (the 2.4 parameter order)", edits=edits,
                   applicability=ctx.applicability(needs=self.replacement_since))
