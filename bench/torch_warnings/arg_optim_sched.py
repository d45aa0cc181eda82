import torch
from torch import nn, optim
from torch.optim import lr_scheduler
from torch.optim.lr_scheduler import CosineAnnealingLR, MultiStepLR

model = nn.Linear(4, 2)
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
cosine = CosineAnnealingLR(optimizer, T_max=10)
multi = MultiStepLR(optimizer, milestones=[2, 4])
plateau = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "min")
expo = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

for epoch in range(2):
    optimizer.zero_grad()
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
    scheduler.step(epoch)
    cosine.step(epoch=epoch)
    multi.step(epoch)
    expo.step(epoch + 1)
    plateau.step(0.5, epoch)


class Trainer:
    def __init__(self, model):
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda e: 0.95 ** e)

    def end_epoch(self, epoch):
        self.opt.step()
        self.sched.step(epoch)


t = Trainer(model)
t.end_epoch(3)
optimizer.step()
scheduler.step()
cosine.step()
plateau.step(0.1)
lr = scheduler.get_last_lr()
