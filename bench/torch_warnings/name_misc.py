import os
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm, clip_grad_norm
from torch.nn.functional import upsample, upsample_bilinear, upsample_nearest
from torch.backends.cuda import sdp_kernel
import torch.utils._pytree as pytree
from torch.utils._pytree import _register_pytree_node
from torch.nn.utils import stateless
x = torch.randn(1, 3, 8, 8)
q = torch.randn(1, 2, 4, 8)
with torch.backends.cuda.sdp_kernel(enable_flash=False):
    out = F.scaled_dot_product_attention(q, q, q)
with sdp_kernel(enable_math=True):
    out = F.scaled_dot_product_attention(q, q, q)


class Point:
    def __init__(self, a, b):
        self.a, self.b = a, b


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


pytree._register_pytree_node(Point, lambda p: ([p.a, p.b], None), lambda xs, _: Point(*xs))
_register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs))
y = F.upsample(x, scale_factor=2, mode="nearest")
y = upsample(x, size=(16, 16), mode="bilinear", align_corners=False)
y = F.upsample_bilinear(x, scale_factor=2)
y = upsample_nearest(x, scale_factor=2)
y = upsample_bilinear(x, size=(4, 4))
y = nn.functional.upsample_nearest(x, size=(16, 16))
lin = nn.Linear(4, 4)
wn = weight_norm(nn.Linear(4, 4))
wn2 = nn.utils.weight_norm(nn.Conv2d(3, 3, 1), name="weight")
wn3 = torch.nn.utils.weight_norm(nn.Linear(2, 2), dim=None)
loss = lin(torch.randn(2, 4)).sum()
loss.backward()
norm = clip_grad_norm(lin.parameters(), max_norm=1.0)
norm = nn.utils.clip_grad_norm(lin.parameters(), 0.5)
norm = torch.nn.utils.clip_grad_norm(lin.parameters(), 1.0, norm_type=2)
out = stateless.functional_call(lin, dict(lin.named_parameters()), (torch.randn(1, 4),))
out = torch.nn.utils.stateless.functional_call(lin, {}, (torch.randn(1, 4),))
a = torch.randn(3, 3)
lu = torch.lu(a)
p = torch.chain_matmul(a, a, a)
r = torch.range(0, 5)
r2 = torch.range(1, 10, 2)
s = torch.cuda.amp.GradScaler(enabled=False)
os.environ["TORCH_HUB"] = "/tmp/torch_hub_cache"
hub_dir = torch.hub.get_dir()
print(torch.hub.get_dir())
loss_fn = nn.NLLLoss2d()
cont = nn.Container()
t = torch.ones(3)
t2 = t.resize(3)
t3 = torch.ones(2).resize_as(torch.ones(2))
from torch.autograd.gradcheck import get_numerical_jacobian
gen = get_numerical_jacobian(torch.sin, (torch.randn(2, dtype=torch.double),))
