import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
import torch.cuda.amp as amp
from torch.cuda import amp as cuda_amp
from torch.cpu.amp import autocast as cpu_autocast
model = nn.Linear(4, 2)
x = torch.randn(3, 4)
scaler = GradScaler(enabled=False)
with autocast(enabled=False):
    y = model(x)
scaler2 = torch.cuda.amp.GradScaler(enabled=False, init_scale=1024.0)
with torch.cuda.amp.autocast(enabled=False):
    y = model(x)
with amp.autocast(enabled=False):
    y = model(x)
with cuda_amp.autocast(dtype=torch.float16, enabled=False):
    y = model(x)
with cpu_autocast(dtype=torch.bfloat16):
    y = model(x)
with torch.cpu.amp.autocast():
    y = model(x)
cpu_scaler = torch.cpu.amp.GradScaler()
amp_scaler = amp.GradScaler(enabled=False)


def train_step(batch):
    from torch.cuda.amp import autocast as ac
    with ac(enabled=False):
        return model(batch)


y = train_step(x)


class MyFn(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, a):
        return a * 2

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, g):
        return g * 2


class MyFn2(torch.autograd.Function):
    @staticmethod
    @amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, a):
        return a * 2

    @staticmethod
    @amp.custom_bwd
    def backward(ctx, g):
        return g * 2


out = MyFn.apply(x)
ctx_manager = torch.cuda.amp.autocast(enabled=False)
enabled = torch.cuda.amp.autocast_mode.autocast(enabled=False)
