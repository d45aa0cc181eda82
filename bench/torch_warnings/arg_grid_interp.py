import torch
import torch.nn as nn
import torch.nn.functional as F


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 6)

    def forward(self, x):
        theta = self.fc(x.flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size())
        out = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros")
        grid2 = F.affine_grid(theta, list(x.shape), False)
        out2 = F.grid_sample(x, grid2, "bilinear", "border", False)
        return out, out2


img = torch.randn(2, 1, 4, 4)
y = STN()(img)
flow = torch.rand(2, 4, 4, 2) * 2 - 1
warped = F.grid_sample(img, flow, padding_mode="border")
warped2 = torch.nn.functional.grid_sample(img, flow, mode="nearest")
up = F.upsample(img, scale_factor=2, mode="bilinear")
up2 = F.upsample_bilinear(img, scale_factor=2)
up3 = F.upsample_nearest(img, scale_factor=2)
up4 = F.interpolate(img, scale_factor=2, mode="bilinear")
ok1 = F.grid_sample(img, flow, align_corners=True)
ok2 = F.interpolate(img, size=(8, 8), mode="bilinear", align_corners=False)
ok3 = F.affine_grid(torch.eye(2, 3).unsqueeze(0).repeat(2, 1, 1), img.size(), align_corners=False)
