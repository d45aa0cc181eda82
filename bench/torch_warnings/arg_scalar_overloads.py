import math
import torch
from torch import nn
from torch.optim import Optimizer


class LegacyAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p.data)
                    state["exp_avg_sq"] = torch.zeros_like(p.data)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(group["weight_decay"], p.data)
                exp_avg.mul_(beta1).add_(1 - beta1, grad)
                exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"] * math.sqrt(1 - beta2 ** state["step"]) / (1 - beta1 ** state["step"])
                p.data.addcdiv_(-step_size, exp_avg, denom)
        return None


model = nn.Linear(4, 2)
opt = LegacyAdam(model.parameters(), weight_decay=0.01)
model(torch.randn(3, 4)).sum().backward()
opt.step()

a = torch.randn(3)
b = torch.randn(3)
c = torch.rand(3) + 0.5
d = torch.add(a, 2, b)
e = a.sub(0.5, b)
f = torch.addcmul(a, 0.1, b, c)
g = torch.addcdiv(a, 0.1, b, c)
a.sub_(0.1, b)
h = a.addcmul(2, b, c)
w = model.weight
w.data.add_(-0.01, w.grad)
ok1 = a.add(b, alpha=2)
ok2 = torch.addcmul(a, b, c, value=0.1)
a.add_(b, alpha=-0.1)
ok3 = a.addcdiv(b, c, value=0.5)
ok4 = a.add(1.0)
