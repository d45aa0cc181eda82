import torch
x = torch.zeros(3)
idx = torch.tensor([0, 1, 0])
src = torch.ones(3)
a = x.scatter(0, idx, src, reduce="add")
ok = x.scatter_reduce(0, idx, src, reduce="sum")
b = torch.scatter(x, 0, idx, src, reduce="multiply")
