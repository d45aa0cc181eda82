import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(8, 3), nn.Softmax())  # warns where called
        self.crit = nn.KLDivLoss()  # warns where called
        self.ok_head = nn.Sequential(nn.Linear(8, 3), nn.LogSoftmax(dim=-1))

    def forward(self, x, target):
        h = self.body(x)
        p = self.head(h)
        loss = self.crit(p.log(), target)
        q = self.ok_head(h)
        return p, loss, q


net = Net()
x = torch.randn(2, 4)
t = F.softmax(torch.randn(2, 3), dim=-1)
p, loss, q = net(x, t)
classifier = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax())  # warns where called
scores = classifier(x)
criterion = nn.KLDivLoss()  # warns where called


def step(inp, tgt):
    return criterion(inp, tgt)


val = step(scores, t)
