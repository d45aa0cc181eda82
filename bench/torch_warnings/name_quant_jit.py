import torch
import torch.nn as nn
import torch.ao.quantization as tq
from torch.quantization import quantize_dynamic
from torch.ao.quantization import QConfigDynamic, default_dynamic_qconfig
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
qm = torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
qm2 = quantize_dynamic(model, {nn.Linear})
qm3 = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
qm4 = tq.quantize_dynamic(model)
model.qconfig = tq.get_default_qconfig("x86")
prepared = tq.prepare(nn.Sequential(tq.QuantStub(), nn.Linear(2, 2), tq.DeQuantStub()).eval())
cfg = torch.ao.quantization.get_default_qconfig_dict()
cfg2 = tq.get_default_qat_qconfig_dict()


def f(a):
    return a * 2


scripted = torch.jit.script(f)
fut = torch.jit.fork(f, torch.ones(1))
res = torch.jit.wait(fut)
frozen = torch.jit.freeze(torch.jit.script(nn.Linear(2, 2).eval()))
opt = torch.jit.optimize_for_inference(torch.jit.script(nn.Linear(2, 2).eval()))
torch.jit.set_fusion_strategy([("STATIC", 2)])
