"""TP212: eager and FX graph mode quantization in torch.ao.quantization, deprecated in 2.8 for torchao."""

from __future__ import annotations

import re

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

EAGER = ("quantize", "quantize_dynamic", "prepare", "convert", "prepare_qat", "quantize_qat")
FX = ("prepare_fx", "convert_fx", "prepare_qat_fx")

#: Modules that expose them. ``torch.quantization`` re-exports the very same function objects
#: (checked against torch 2.13 in tests/test_rules_jit_quant_onnx.py).
_EAGER_MODULES = ("torch.ao.quantization", "torch.ao.quantization.quantize", "torch.quantization",
                  "torch.quantization.quantize")
_FX_MODULES = ("torch.ao.quantization.quantize_fx", "torch.quantization.quantize_fx")

#: ``torch.ao.quantization.quantize`` is both a function and the module that defines it.
_MODULE_AND_FUNCTION = frozenset({"torch.ao.quantization.quantize", "torch.quantization.quantize"})
_ATTRIBUTE = re.compile(r"\s*\.\s*(\w+)")


def _names() -> dict[str, str]:
    names = {f"{module}.{leaf}": leaf for module in _EAGER_MODULES for leaf in EAGER}
    names.update({f"{module}.{leaf}": leaf for module in _FX_MODULES for leaf in FX})
    return names


class EagerFxQuantizationDeprecated(Rule):
    """
    ## What it does
    Flags uses of eager-mode quantization (`torch.ao.quantization.quantize`, `quantize_dynamic`,
    `prepare`, `convert`, `prepare_qat`, `quantize_qat`) and FX graph mode quantization
    (`torch.ao.quantization.quantize_fx.prepare_fx`, `convert_fx`, `prepare_qat_fx`), including their
    `torch.quantization.*` aliases, which are the same functions.

    ## Why is this bad?
    PyTorch 2.8 deprecated quantization in `torch.ao.quantization` in favour of
    [torchao](https://github.com/pytorch/ao): each of these functions raises a `DeprecationWarning`
    (hidden by default) saying it "will be removed in 2.10". That date passed without the removal —
    2.15 still ships them — but they are unmaintained, and the PT2E flow already left core torch in
    2.11. Migrate eager code to `torchao.quantization.quantize_(model, config)` (for example
    `Int8DynamicActivationInt8WeightConfig()` for what `quantize_dynamic` did) and FX graph mode to
    torchao's PT2E flow (`torchao.quantization.pt2e.quantize_pt2e.prepare_pt2e/convert_pt2e`). The
    configs and numerics differ, so there is no automatic fix.
    """

    code = "TP212"
    name = "eager-fx-quantization-deprecated"
    summary = "Eager/FX `torch.ao.quantization` APIs (deprecated in 2.8; use torchao `quantize_`)"
    deprecated_in = v("2.8")
    references = (
        "https://github.com/pytorch/ao/issues/2259",
        "https://docs.pytorch.org/ao/stable/quick_start.html",
    )
    catalog_ids = ("quant.ao-eager-fx-deprecated",)
    references_to = frozenset(_names())

    VALID = [
        'from torchao.quantization import quantize_, Int8DynamicActivationInt8WeightConfig\n'
        'quantize_(model, Int8DynamicActivationInt8WeightConfig())\n',
        'import torch\nqconfig = torch.ao.quantization.get_default_qconfig("x86")\n',
        'from torch.ao.quantization import quantize_dynamic\n',  # the import alone: its uses are reported
        'import torch\ndef convert(model):\n    return model\nmodel = convert(model)\n',
        'class Pipeline:\n    def run(self):\n        return self.quantization.prepare(self.model)\n',
        'import tensorflow as tf\nconverter = tf.lite.TFLiteConverter.from_keras_model(model)\nmodel = converter.convert()\n',
        Valid('import torch\nqm = torch.ao.quantization.quantize_dynamic(model)\n', target_torch="2.7"),
    ]
    INVALID = [
        Invalid('import torch\nqm = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)\n'),
        Invalid('import torch\nqm = torch.quantization.quantize_dynamic(model)\n'),
        Invalid('from torch.ao.quantization import prepare, convert\nprepared = prepare(model)\nqm = convert(prepared)\n'),
        Invalid('from torch.ao.quantization.quantize_fx import prepare_fx, convert_fx\n'
                'prepared = prepare_fx(model, qconfig_mapping, example_inputs)\nqm = convert_fx(prepared)\n'),
        Invalid('import torch.quantization as tq\nqm = tq.quantize_qat(model, train_fn, [loader])\n'),
        Invalid('from torch.ao.quantization.quantize import quantize\nqm = quantize(model, calibrate, [data])\n'),
        Invalid('import torch\nqm = torch.ao.quantization.quantize.prepare_qat(model)\n'),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import:
            return
        qualname = reference.qualname
        node = reference.node
        if qualname in _MODULE_AND_FUNCTION:
            # ``torch.ao.quantization.quantize.prepare_qat``: the module, followed by the function.
            match = _ATTRIBUTE.match(ctx.text, ctx.end(node))
            if match is not None:
                qualname = f"{qualname}.{match.group(1)}"
                if qualname not in self.references_to:
                    return
                node = (ctx.start(node), match.end())
        leaf = _names()[qualname]
        if leaf in FX:
            instead = ("torchao PT2E quantization (`torchao.quantization.pt2e.quantize_pt2e.prepare_pt2e` / "
                       "`convert_pt2e` with a torchao quantizer)")
        else:
            instead = "torchao `quantize_(model, config)` (`pip install torchao`)"
        public = "torch.ao.quantization.quantize_fx" if leaf in FX else "torch.ao.quantization"
        message = (f"`{public}.{leaf}` is {self.version_phrase(ctx.target)} (DeprecationWarning; still shipped "
                   f"in 2.15): migrate to {instead}")
        yield ctx.diagnostic(node, message)
