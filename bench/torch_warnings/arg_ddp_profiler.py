import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", rank=0, world_size=1)
model = nn.Linear(4, 4)
ddp1 = DDP(model, check_reduction=True)
ddp2 = DDP(nn.Linear(4, 4), broadcast_buffers=False)
ddp3 = torch.nn.parallel.DistributedDataParallel(nn.Linear(4, 4), find_unused_parameters=False, broadcast_buffers=True)
ok = DDP(nn.Linear(4, 4), find_unused_parameters=False)
with torch.autograd.profiler.profile(with_modules=True) as prof:
    model(torch.randn(2, 4))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof2:
    model(torch.randn(2, 4))
dist.destroy_process_group()
