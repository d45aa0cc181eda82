import torch


def make_anchors(h, w, stride=8):
    ys = torch.arange(h, dtype=torch.float32) * stride
    xs = torch.arange(w, dtype=torch.float32) * stride
    shift_y, shift_x = torch.meshgrid(ys, xs)
    return torch.stack((shift_x.reshape(-1), shift_y.reshape(-1)), dim=1)


def make_grid(nx=4, ny=3):
    yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)])
    return torch.stack((xv, yv), 2)


def make_grid_new(nx=4, ny=3):
    yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
    return torch.stack((xv, yv), 2)


a = make_anchors(2, 3)
g = make_grid()
n = make_grid_new()
coords = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 3), torch.linspace(-1, 1, 3)), -1)
ok = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 3), torch.linspace(-1, 1, 3), indexing="xy"), -1)
