import torch
from torch.ao.quantization.observer import MinMaxObserver, HistogramObserver
obs = MinMaxObserver(reduce_range=True)
obs2 = HistogramObserver(reduce_range=True)
ok = MinMaxObserver()
