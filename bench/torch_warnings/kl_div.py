import torch
import torch.nn.functional as F
p = torch.randn(4, 3).log_softmax(-1)
q = torch.randn(4, 3).softmax(-1)
a = F.kl_div(p, q)
b = F.kl_div(p, q, reduction="mean")
c = F.kl_div(p, q, reduction="batchmean")
d = torch.nn.KLDivLoss()(p, q)
