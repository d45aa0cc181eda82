import torch
from torch.utils.checkpoint import checkpoint
x = torch.ones(2, requires_grad=True)
s = x.storage()
u = x.untyped_storage()
y = checkpoint(torch.sin, x)
z = checkpoint(torch.sin, x, use_reentrant=False)
