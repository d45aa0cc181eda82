import os
import socket
import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
t = torch.ones(4)
dist.all_reduce(t, op=dist.reduce_op.SUM)
op = dist.reduce_op.MAX
dist.all_reduce(t, op=torch.distributed.reduce_op.SUM)
out = torch.empty(4)
dist._all_gather_base(out, t)
c10d._all_gather_base(out, t)
try:
    dist._reduce_scatter_base(out, t)
except RuntimeError:
    pass
r = c10d._get_global_rank(dist.group.WORLD, 0)
outs = [[torch.empty(4)]]
dist.all_gather_coalesced(outs, [t])
dist.all_reduce_coalesced([t])


def sync(tensor):
    from torch.distributed import reduce_op
    dist.all_reduce(tensor, op=reduce_op.SUM)
    return tensor


sync(t)
dist.destroy_process_group()
