import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.randn(4, 3)
y = torch.randn(4, 3)
crit = nn.MSELoss(size_average=False)
l1 = F.mse_loss(x, y, size_average=True)
l2 = F.l1_loss(x, y, reduce=False)
crit2 = nn.CrossEntropyLoss(reduce=False)
ok = F.mse_loss(x, y, reduction="sum")
ok2 = nn.MSELoss(reduction="none")
