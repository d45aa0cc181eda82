import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.randn(4, 3)
a = F.softmax(x)
b = F.log_softmax(x)
c = F.softmin(x)
d = nn.Softmax()(x)
e = nn.LogSoftmax()(x)
ok = F.softmax(x, dim=-1)
ok2 = nn.Softmax(dim=1)(x)
ok3 = torch.softmax(x, -1)
