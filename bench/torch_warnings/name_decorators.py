import torch
from torch import no_grad, inference_mode, enable_grad
import torch.nn as nn


@torch.no_grad()
class Evaluator:
    def run(self, model, x):
        return model(x)


@no_grad()
class Predictor:
    pass


@torch.enable_grad()
class Trainer:
    pass


@enable_grad()
class Trainer2:
    pass


@torch.inference_mode()
class Infer:
    pass


@torch.no_grad()
def evaluate(model, x):
    return model(x)


evaluate(nn.Linear(2, 2), torch.ones(2))


class MyTensor(torch.Tensor):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class Wrapper:
    def __init__(self, value):
        self.value = value

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args = [a.value if isinstance(a, Wrapper) else a for a in args]
        return func(*args, **kwargs)


class GoodWrapper:
    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args = [a.value if isinstance(a, GoodWrapper) else a for a in args]
        return func(*args, **kwargs)


w = Wrapper(torch.ones(2))
r1 = torch.nn.functional.relu(w)
r2 = torch.add(w, 1)
g = GoodWrapper(torch.ones(2))
r3 = torch.nn.functional.relu(g)
mt = torch.ones(2).as_subclass(MyTensor)
r4 = mt + 1
