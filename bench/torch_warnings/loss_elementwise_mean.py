import torch
import torch.nn.functional as F
x = torch.randn(4, 3)
y = torch.randn(4, 3)
l = F.mse_loss(x, y, reduction="elementwise_mean")
ok = F.mse_loss(x, y, reduction="mean")
