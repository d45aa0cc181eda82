import torch
import torch.nn as nn
import torch.nn.init as init
from torch.nn import init as nninit
from torch.nn.init import kaiming_normal, xavier_uniform, constant
from torch.testing import assert_allclose
import torch.testing as tt
layer = nn.Linear(8, 4)
conv = nn.Conv2d(3, 8, 3)
nn.init.xavier_uniform(layer.weight)
nn.init.constant(layer.bias, 0.0)
init.kaiming_normal(conv.weight, mode="fan_out")
init.normal(conv.bias, std=0.01)
nninit.uniform(layer.bias, -0.1, 0.1)
nninit.xavier_normal(layer.weight, gain=2.0)
kaiming_normal(conv.weight)
xavier_uniform(layer.weight)
constant(conv.bias, 0)
torch.nn.init.orthogonal(layer.weight)
torch.nn.init.kaiming_uniform(conv.weight, a=0.1)
torch.nn.init.eye(torch.empty(3, 3))
torch.nn.init.dirac(torch.empty(4, 4, 3))
torch.nn.init.sparse(torch.empty(6, 6), sparsity=0.5)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_normal(m.weight)
        nn.init.constant(m.bias, 0.01)


nn.Sequential(nn.Linear(2, 2)).apply(init_weights)
a = torch.ones(3)
assert_allclose(a, a + 1e-9)
torch.testing.assert_allclose(a, torch.ones(3), rtol=1e-3, atol=1e-3)
tt.assert_allclose(a.numpy(), a)


def test_close():
    from torch.testing import assert_allclose as close
    close(torch.zeros(2), torch.zeros(2))


test_close()
