import torch
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
opt.step()
sched.step(1)
sched.step(epoch=2)
opt.step()
sched.step()
