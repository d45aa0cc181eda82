"""TP267: building a quantized torch.ao.nn module (quint8/qint8 weights), deprecated with those dtypes in 2.13."""

from __future__ import annotations

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: The classes whose constructor makes a quint8/qint8 tensor, so torch 2.13 and 2.15 warn when one is built
#: (run one by one with ``torch.set_warn_always(True)``; the norms, activations without weights, Quantize,
#: FloatFunctional and the rest build no quantized tensor and stay silent).
_WEIGHTED = {
    "torch.ao.nn.quantized": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                              "Embedding", "EmbeddingBag", "Linear", "PReLU"),
    "torch.ao.nn.quantized.dynamic": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                                      "ConvTranspose3d", "GRU", "GRUCell", "LSTM", "LSTMCell", "Linear", "RNNCell"),
    "torch.ao.nn.intrinsic.quantized": ("ConvAdd2d", "ConvAddReLU2d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d",
                                        "LinearLeakyReLU", "LinearReLU", "LinearTanh"),
}
#: The old namespaces re-export the very same classes (``torch.nn.quantized.Linear is torch.ao.nn.quantized.Linear``).
_ALIASES = {"torch.ao.nn.quantized": "torch.nn.quantized", "torch.ao.nn.quantized.dynamic": "torch.nn.quantized.dynamic",
            "torch.ao.nn.intrinsic.quantized": "torch.nn.intrinsic.quantized"}
#: Class methods that build the module from a float (or reference) one: ``convert`` calls them.
_BUILDERS = ("from_float", "from_reference")

_MESSAGE = ("torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor creation functions that "
            "produce tensors with dtype torch.quint8, torch.qint8, and torch.qint32 are deprecated and will be removed "
            "in a future PyTorch release.")


def _classes() -> frozenset[str]:
    names = set()
    for module, classes in _WEIGHTED.items():
        for prefix in (module, _ALIASES[module]):
            names.update(f"{prefix}.{name}" for name in classes)
    return frozenset(names)


CLASSES = _classes()


class QuantizedModuleConstruction(Rule):
    """
    ## What it does
    Flags building a quantized module that holds quantized weights: `torch.ao.nn.quantized.Linear(...)`,
    `Conv1d`-`Conv3d`, `ConvTranspose*`, `Embedding`, `EmbeddingBag`, `PReLU`, the dynamic `Linear`, `LSTM`,
    `GRU` and cells in `torch.ao.nn.quantized.dynamic`, the fused ones in `torch.ao.nn.intrinsic.quantized`, and
    their `torch.nn.quantized.*` aliases, as a call of the class or of its `from_float` / `from_reference`.

    ## Why is this bad?
    PyTorch 2.13 deprecated tensors of dtype `torch.quint8`, `torch.qint8` and `torch.qint32`
    ([pytorch#184982](https://github.com/pytorch/pytorch/issues/184982)): every function that creates one
    warns (`UserWarning`, from C++), and these modules create one for their weights when built, so torch
    warns at the line that builds them. The quantized tensors are to be removed; torchao's tensor subclasses
    (`torchao.quantization.quantize_(model, config)`) replace them. Other configs and numerics: no fix.
    """

    code = "TP267"
    name = "quantized-module-construction"
    summary = "building a `torch.ao.nn.quantized` module with quint8/qint8 weights (deprecated in 2.13; use torchao)"
    deprecated_in = v("2.13")
    torch_message = _MESSAGE
    references = ("https://github.com/pytorch/pytorch/issues/184982",
                  "https://docs.pytorch.org/ao/stable/quick_start.html")
    catalog_ids = ("quant.quantized-dtypes",)
    calls = CLASSES | frozenset(f"{name}.{builder}" for name in CLASSES for builder in _BUILDERS)

    VALID = [
        Valid("import torch\nimport torch.ao.nn.quantized as nnq\nff = nnq.FloatFunctional()\n", torch_runs_clean=True),
        "import torch.ao.nn.quantized as nnq\nimport torch.nn as nn\nMAPPING = {nn.Linear: nnq.Linear}\n",
        "import torch.ao.nn.quantized as nnq\ndef is_quantized(m):\n    return isinstance(m, nnq.Linear)\n",
        Valid("import torch.ao.nn.quantized as nnq\nimport torch\nlinear = nnq.Linear(4, 4)\n", target_torch="2.12"),
    ]
    INVALID = [
        Invalid("import torch\nimport torch.ao.nn.quantized as nnq\nlayer = nnq.Linear(4, 4)\n",
                torch_warns="quantized tensor creation functions .* are deprecated"),
        Invalid("import torch\nfrom torch.ao.nn.quantized.dynamic import LSTM\nrnn = LSTM(4, 4)\n",
                torch_warns="quantized tensor creation functions .* are deprecated"),
        Invalid("import torch\nconv = torch.nn.quantized.Conv2d(1, 1, 1)\n",
                torch_warns="quantized tensor creation functions .* are deprecated"),
        Invalid("import torch\nimport torch.nn.intrinsic.quantized as nniq\nfused = nniq.LinearReLU(2, 2)\n",
                torch_warns="quantized tensor creation functions .* are deprecated"),
        Invalid("import torch.ao.nn.quantized as nnq\ndef convert_one(float_linear):\n"
                "    return nnq.Linear.from_float(float_linear)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        built = qualname.rpartition(".")[0] if qualname.endswith(_BUILDERS) else qualname
        yield ctx.diagnostic(call, f"`{built}(...)` builds quint8/qint8 weights: quantized dtypes are deprecated since PyTorch {self.deprecated_in} "
                                   f"(torch warns); quantize with torchao (`torchao.quantization.quantize_`)")
