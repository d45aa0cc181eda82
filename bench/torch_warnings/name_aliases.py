import contextlib
import functools
import torch
import torch.nn as nn
model = nn.Linear(4, 4)
x = torch.randn(2, 4)
use_amp = False
autocast_fn = torch.cuda.amp.autocast
with autocast_fn(enabled=use_amp):
    y = model(x)
amp_ctx = functools.partial(torch.cuda.amp.autocast, enabled=use_amp)
with amp_ctx():
    y = model(x)
maybe = torch.cuda.amp.autocast if not use_amp else contextlib.nullcontext
with maybe(enabled=False):
    y = model(x)
init_fn = nn.init.xavier_uniform
init_fn(model.weight)
clip = torch.nn.utils.clip_grad_norm
model(x).sum().backward()
clip(model.parameters(), 1.0)


class Trainer:
    def __init__(self):
        self.scaler = torch.cuda.amp.GradScaler(enabled=False)
        self.model = nn.Linear(4, 4)
        self.init = nn.init.kaiming_normal

    def step(self, batch):
        with torch.cuda.amp.autocast(enabled=False):
            out = self.model(batch)
        self.init(self.model.weight)
        return out.storage()


Trainer().step(x)
storage_of = lambda t: t.storage()
for p in model.parameters():
    storage_of(p)
