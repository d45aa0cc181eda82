import torch
from collections import OrderedDict
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(self.conv(x))


net = Block()
dest = OrderedDict()
sd1 = net.state_dict(dest, "block.")
sd2 = net.conv.state_dict(None, "conv.", True)
lin = nn.Linear(2, 2)
sd3 = lin.state_dict(OrderedDict(), "lin.")
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
sd4 = seq.state_dict({}, "")
ok1 = net.state_dict()
ok2 = net.state_dict(prefix="block.", keep_vars=True)
ok3 = lin.state_dict(destination=OrderedDict(), prefix="lin.")
