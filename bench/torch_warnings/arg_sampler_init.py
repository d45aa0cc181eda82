import torch
from torch.utils.data import Sampler, TensorDataset
from torch.utils import data


class OldSampler(Sampler):
    def __init__(self, data_source, shuffle=False):
        super(OldSampler, self).__init__(data_source)
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))


class NewSampler(data.Sampler):
    def __init__(self, data_source):
        super().__init__()
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))


ds = TensorDataset(torch.randn(8, 3))
ok = list(NewSampler(ds))
s = OldSampler(ds)
