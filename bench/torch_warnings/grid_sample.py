import torch
import torch.nn.functional as F
img = torch.randn(1, 1, 4, 4)
theta = torch.eye(2, 3).unsqueeze(0)
grid = F.affine_grid(theta, (1, 1, 4, 4))
out = F.grid_sample(img, grid)
ok_grid = F.affine_grid(theta, (1, 1, 4, 4), align_corners=False)
ok = F.grid_sample(img, ok_grid, align_corners=False)
