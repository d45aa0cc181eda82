import torch
model = torch.nn.Linear(2, 2)
dest = {}
sd = model.state_dict(dest, "prefix.")
ok = model.state_dict(prefix="p.")
