import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.randn(4, 3)
m = nn.Softmin(dim=1)
a = m(x)
kl = nn.KLDivLoss(reduction="batchmean")
b = kl(x.log_softmax(-1), x.softmax(-1))
c = F.kl_div(x.log_softmax(-1), x.softmax(-1), reduction="batchmean")
d = F.cross_entropy(x, torch.tensor([0, 1, 2, 0]), reduction="none")
e = nn.Softmin()(x)
