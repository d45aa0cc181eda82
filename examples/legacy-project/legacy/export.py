"""Export for deployment: torch.export, ONNX and PT2E quantization."""

import torch
from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
from torch.ao.quantization.quantizer.x86_inductor_quantizer import X86InductorQuantizer
from torch.distributed._tensor import DTensor


def export_quantized(model, example):
    program = torch.export.export_for_training(model, (example,))
    quantizer = X86InductorQuantizer()
    prepared = prepare_pt2e(program.module(), quantizer)
    prepared(example)
    return convert_pt2e(prepared)


def export_onnx(model, example, path):
    torch.onnx.export(model, (example,), path, dynamo=True, fallback=True)


def is_sharded(tensor):
    return isinstance(tensor, DTensor)
