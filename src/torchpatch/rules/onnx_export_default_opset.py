"""TP436: `torch.onnx.export` without `opset_version=`, whose default changed in 2.8 and 2.9 (opt-in)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_double_star, keyword
from torchpatch.rules._onnx_calls import EXPORT, takes_new_exporter
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v

#: `opset_version` was the 10th positional parameter of `torch.onnx.export` in 2.4.1 (keyword-only from 2.5).
_OPSET_POSITION = 9


def default_opset(release: Version, new_exporter: bool) -> int:
    """The opset `torch.onnx.export` writes when none is given, read from the 2.4.1 … 2.15.0 wheels.

    TorchScript-based exporter: `ONNX_DEFAULT_OPSET` in torch/onnx/_constants.py, 17 up to 2.7, 18 in 2.8, 20
    from 2.9. torch.export-based exporter: 18 in 2.5 (`_compat.py`), the torchlib opset (18) in 2.6-2.8, and
    `ONNX_DEFAULT_OPSET` (20) from 2.9.
    """
    if release >= v("2.9"):
        return 20
    if new_exporter or release >= v("2.8"):
        return 18
    return 17


class OnnxExportDefaultOpset(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(...)` calls without `opset_version=` when the opset they write differs
    between your minimum torch and the target, for the exporter the call takes (`dynamo=`, or the
    release's default). Opt-in: the call works, the model it writes changes.

    ## Why is this bad?
    The default opset moved twice: the TorchScript-based exporter wrote opset 17 up to 2.7, 18 in
    2.8 and 20 from 2.9; the `torch.export`-based one 18 before 2.9 and 20 since
    (`torch/onnx/_constants.py` and the exporter's `_compat.py` in each wheel). The same code then
    writes models that an older ONNX Runtime, TensorRT or mobile runtime cannot load. Pass
    `opset_version=` for the runtime you deploy to (the TorchScript-based exporter supports at
    most 20, the `torch.export`-based one 23).
    """

    code = "TP436"
    name = "onnx-export-default-opset"
    summary = "`torch.onnx.export` without `opset_version=` (default 17 → 18 in 2.8 → 20 in 2.9)"
    changed_in = v("2.8")
    opt_in = True
    fix_safety_note = "No fix: the opset is the deployment runtime's choice, which the code does not show."
    references = ("https://docs.pytorch.org/docs/stable/onnx_export.html",)
    catalog_ids = ("onnx.default-opset",)
    calls = EXPORT

    VALID = [
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        Valid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True)\n', min_torch="2.9"),
        Valid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=False)\n', min_torch="2.4", target_torch="2.7"),
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, **options)\n',
    ]
    INVALID = [
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=False)\n', min_torch="2.4", target_torch="2.8"),
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True)\n', min_torch="2.6"),
    ]

    def check_call(self, ctx, call, qualname):
        if keyword(call, "opset_version") is not None or has_double_star(call):
            return
        if any(isinstance(item, ast.Starred) for item in call.args) or len(call.args) > _OPSET_POSITION:
            return  # 2.4 still took opset_version positionally: it may be among these
        old_exporter = takes_new_exporter(ctx, call, ctx.min_torch)
        new_exporter = takes_new_exporter(ctx, call, ctx.target)
        if old_exporter is None or new_exporter is None:
            return
        old = default_opset(ctx.min_torch, old_exporter)
        new = default_opset(ctx.target, new_exporter)
        if old == new:
            return
        yield ctx.diagnostic(call.func, (
            f"`torch.onnx.export` without `opset_version=` writes opset {old} on PyTorch {ctx.min_torch} and {new} "
            f"on {ctx.target} (the default changed in 2.8 and 2.9); pass the opset your runtime loads"))
