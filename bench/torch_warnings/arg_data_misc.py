import io
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, Sampler, RandomSampler
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class MySampler(Sampler):
    def __init__(self, data_source):
        super().__init__()
        self.n = len(data_source)

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


ds = TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,)))
sampler = MySampler(ds)
loader = DataLoader(ds, batch_size=4, sampler=sampler)
batch = next(iter(loader))
buf = io.BytesIO()
torch.save({"w": torch.ones(2)}, buf)
buf.seek(0)
state2 = torch.load(buf, weights_only=True)
block = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))
inp = torch.randn(2, 3, requires_grad=True)
out = checkpoint(block, inp)
out2 = checkpoint_sequential(block, 2, inp)
out3 = torch.utils.checkpoint.checkpoint(block, inp, use_reentrant=False)
out4 = checkpoint_sequential(block, 2, inp, use_reentrant=False)
total = nn.utils.clip_grad_norm_(block.parameters(), 1.0)
act = nn.Hardtanh(min_value=-2.0, max_value=2.0)
h = act(inp)
ok = nn.Hardtanh(min_val=-1.0, max_val=1.0)(inp)
ok_loader = DataLoader(ds, batch_size=4, sampler=RandomSampler(ds))
