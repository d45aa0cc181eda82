import torch
from torch import nn
from torch.ao.quantization import MinMaxObserver
from torch.ao.quantization.observer import HistogramObserver


class RangeObserver(MinMaxObserver):
    def __init__(self):
        super().__init__(reduce_range=True)


class OldHist(HistogramObserver):
    def __init__(self, bins=64):
        super(OldHist, self).__init__(bins=bins, reduce_range=True)


class SumMSE(nn.MSELoss):
    def __init__(self):
        super().__init__(size_average=False)


class NoneCE(nn.CrossEntropyLoss):
    def __init__(self, weight=None):
        super().__init__(weight, None, -100, False)


class GoodCE(nn.CrossEntropyLoss):
    def __init__(self):
        super().__init__(reduction="sum")


class GoodObserver(MinMaxObserver):
    def __init__(self):
        super().__init__(quant_min=0, quant_max=127)


o1 = RangeObserver()
o2 = OldHist()
l1 = SumMSE()(torch.randn(3), torch.randn(3))
l2 = NoneCE()(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))
ok1 = GoodCE()(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))
ok2 = GoodObserver()
