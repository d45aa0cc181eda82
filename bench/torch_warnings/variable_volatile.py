import torch
from torch.autograd import Variable
v = Variable(torch.ones(2), volatile=True)
ok = torch.ones(2)
