import io
import torch
model = torch.nn.Linear(2, 2)
x = torch.randn(1, 2)
torch.onnx.export(model, (x,), io.BytesIO(), dynamo=False)
