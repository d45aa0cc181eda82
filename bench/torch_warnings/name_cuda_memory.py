import torch
import torch.cuda as tcuda
from torch.cuda import memory_cached, max_memory_cached
print(torch.cuda.memory_cached())
print("peak", torch.cuda.max_memory_cached(0))
cached = memory_cached()
peak = max_memory_cached(device=0)
mb = tcuda.memory_cached() / 2**20
stats = {"cached": torch.cuda.memory.memory_cached(), "max_cached": torch.cuda.memory.max_memory_cached()}


def log_memory(device=0):
    return torch.cuda.memory_cached(device) / 1e9, torch.cuda.max_memory_cached(device) / 1e9


log_memory()
try:
    torch.cuda.reset_max_memory_allocated()
except (RuntimeError, AttributeError):
    pass
try:
    torch.cuda.reset_max_memory_cached()
except (RuntimeError, AttributeError):
    pass
try:
    tcuda.reset_max_memory_allocated(device=0)
except (RuntimeError, AttributeError):
    pass
