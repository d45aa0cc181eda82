import torch
x = torch.ones(2, requires_grad=True)
y = (x * 2).sum()
g = torch.autograd.grad(y, x, only_inputs=False)
y2 = (x * 3).sum()
ok = torch.autograd.grad(y2, x)
