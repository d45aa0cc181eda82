import torch
from torch import autograd
from torch.autograd import Variable, grad

x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = (x * w).sum()
gx, = torch.autograd.grad(y, [x], create_graph=True, only_inputs=True)
z = (x ** 2).sum()
gz = autograd.grad(z, x, retain_graph=True, only_inputs=False)
gz2 = grad(outputs=(x * 3).sum(), inputs=x, only_inputs=True)
loss = (x * w).sum()
torch.autograd.backward(loss, grad_variables=torch.ones(()))
v = Variable(torch.randn(2), volatile=True)
v2 = Variable(torch.randn(2), requires_grad=True, volatile=False)
v3 = autograd.Variable(torch.zeros(3), volatile=True)
ok1 = torch.autograd.grad((x * 2).sum(), x)[0]
ok2 = torch.autograd.grad((x * 4).sum(), [x], retain_graph=False, allow_unused=True)
