import torch
from torch import set_default_tensor_type
torch.set_default_tensor_type(torch.FloatTensor)
torch.set_default_tensor_type("torch.FloatTensor")
set_default_tensor_type(torch.DoubleTensor)
set_default_tensor_type(torch.FloatTensor)


def setup(use_double=False):
    if use_double:
        torch.set_default_tensor_type(torch.DoubleTensor)
    else:
        torch.set_default_tensor_type(torch.FloatTensor)


setup(True)
setup(False)
tt = torch.FloatTensor
torch.set_default_tensor_type(tt)
