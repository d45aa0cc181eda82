import torch
import torch.nn as nn
from torch import Tensor
from typing import List, Optional
x = torch.randn(4, 4)
s = x.storage()
st = x.storage_type()
n = torch.zeros(3).storage().size()
ptr = torch.ones(2).storage().data_ptr()
lin = nn.Linear(4, 4)
ws = lin.weight.storage()
wd = lin.weight.data.storage()
bs = lin.bias.storage_type()
p = nn.Parameter(torch.ones(3))
ps = p.storage()
same = x.storage().data_ptr() == x.view(-1).storage().data_ptr()
y = x.view(2, 8)
ys = y.storage()
z = x.t().contiguous()
zs = z.storage()
c = x.clone()
cs = c.storage()
d = x.detach()
ds = d.storage()
u = x.storage().untyped()
e = x.float()
es = e.storage()


def share(t: torch.Tensor):
    return t.storage().data_ptr()


def share2(t: Tensor) -> int:
    return t.storage().data_ptr()


def share3(ts: List[torch.Tensor]):
    return [t.storage().size() for t in ts]


def maybe(t: Optional[torch.Tensor] = None):
    if t is not None:
        return t.storage()


share(x)
share2(x)
share3([x])
maybe(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("running", torch.zeros(4))
        self.scale = nn.Parameter(torch.ones(1))

    def storages(self):
        a = self.fc.weight.storage()
        b = self.running.storage()
        c = self.scale.storage()
        return a, b, c


net = Net()
net.storages()
for param in net.parameters():
    param.storage()
for name, param in net.named_parameters():
    param.storage_type()
for buf in net.buffers():
    buf.storage()
sd = net.state_dict()
for key, value in sd.items():
    value.storage()
for k in sd:
    sd[k].storage()
v = sd["fc.weight"].storage()
params = list(net.parameters())
params[0].storage()
grads = [q.storage() for q in net.parameters()]
m = torch.matmul(x, x)
ms = m.storage()
r = x + 1
rs = r.storage()
a2 = torch.randn(3).to(torch.float64)
a2.storage()
x.data.storage()
lin.weight.grad
