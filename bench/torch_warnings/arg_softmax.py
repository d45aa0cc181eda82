import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import softmax, log_softmax


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.softmax = nn.Softmax()  # warns where called
        self.log_sm = nn.LogSoftmax()  # warns where called
        self.good = nn.Softmax(dim=-1)

    def forward(self, q, k):
        scores = self.proj(q) @ k.transpose(-2, -1)
        w = self.softmax(scores)
        lw = self.log_sm(scores)
        g = self.good(scores)
        p = F.softmax(scores)
        lp = F.log_softmax(scores, dtype=torch.float32)
        return w, lw, g, p, lp


x = torch.randn(2, 4, 8)
att = Attention(8)
outs = att(x, x)
a = softmax(x)
b = log_softmax(x, _stacklevel=5)
c = F.softmin(x)
d = F.softmax(x, None)
e = nn.Softmin()(x)
sm = nn.Softmax()  # warns where called
f = sm(x)
g = F.gumbel_softmax(x, tau=1.0, eps=1e-10)
ok1 = F.softmax(x, -1)
ok2 = x.softmax(dim=-1)
ok3 = torch.log_softmax(x, dim=1)
ok4 = F.gumbel_softmax(x, tau=0.5, hard=True)
ok5 = nn.LogSoftmax(dim=1)(x)
