import io
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
dummy = torch.randn(1, 4)
try:
    torch.onnx.export(model, (dummy,), "/tmp/tp_model.onnx", dynamo=False, input_names=["x"], opset_version=17)
except Exception:
    pass
try:
    torch.onnx.export(model, dummy, "/tmp/tp_model2.onnx", dynamo=False, do_constant_folding=True,
                      dynamic_axes={"x": {0: "batch"}})
except Exception:
    pass
