import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

x = torch.randn(3, 5, requires_grad=True)
t = torch.randint(0, 5, (3,))
a = F.softmax(x, None, 3)
b = F.log_softmax(x, None)
c = nn.Softmax(None)(x)
img = torch.randn(1, 2, 4, 4)
theta = torch.eye(2, 3).unsqueeze(0)
grid = F.affine_grid(theta, [1, 2, 4, 4], None)
out = F.grid_sample(img, grid, "bilinear", "zeros")
out2 = F.grid_sample(img, grid, "nearest", "border", None)
kl = nn.KLDivLoss(None, None, "mean")(F.log_softmax(x, 1), F.softmax(x.detach(), 1))
ce = nn.CrossEntropyLoss(None, False)(x, t)
nll = F.nll_loss(F.log_softmax(x, 1), t, None, None, -100, False)
y = (x ** 2).sum()
g = torch.autograd.grad(y, x, None, None, False, False)
mse = F.mse_loss(x, x.detach() + 1, None, None, "elementwise_mean")
v = Variable(torch.randn(2), False, True)
ok1 = F.softmax(x, 1, 3)
ok2 = F.grid_sample(img, grid, "bilinear", "zeros", False)
ok3 = F.nll_loss(F.log_softmax(x, 1), t, None, None, -100, None, "mean")
