import torch
from torch import nn
from torch.ao.quantization import MinMaxObserver, MovingAverageMinMaxObserver, PerChannelMinMaxObserver
from torch.ao.quantization import observer
from torch.ao.quantization.observer import HistogramObserver, PlaceholderObserver


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @torch.jit.ignore(drop_on_export=True)
    def debug(self, x):
        return x

    @torch.jit.unused
    def extra(self, x):
        return x

    def forward(self, x):
        return self.fc(x)


obs1 = MinMaxObserver(dtype=torch.quint8, reduce_range=True)
obs2 = MovingAverageMinMaxObserver(averaging_constant=0.01, reduce_range=True)
obs3 = PerChannelMinMaxObserver(ch_axis=0, reduce_range=True)
obs4 = HistogramObserver(bins=256, reduce_range=True)
obs5 = observer.MinMaxObserver(qscheme=torch.per_tensor_affine, reduce_range=True)
obs6 = PlaceholderObserver(dtype=torch.float16, compute_dtype=torch.float16)
obs7 = torch.ao.quantization.MinMaxObserver.with_args(reduce_range=True)()
ok1 = MinMaxObserver(quant_min=0, quant_max=127)
ok2 = HistogramObserver(bins=256)
ok3 = PlaceholderObserver(dtype=torch.float16, is_dynamic=False)
