"""Mixed-precision training loop with checkpoint resume."""

import torch
from torch.cuda import amp

from legacy.model import Block


def resume(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]


def train(model: Block, batches, steps: int = 100):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30, verbose=True)
    scaler = amp.GradScaler(2.0 ** 14)
    for step, batch in zip(range(steps), batches):
        with amp.autocast(dtype=torch.float16):
            loss = model(batch).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": steps}, "last.pt")


def load_teacher():
    teacher = torch.hub.load("someone/teacher-models", "tiny_teacher")
    return torch.jit.script(teacher)
