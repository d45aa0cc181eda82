import torch
class M(torch.nn.Module):
    @torch.jit.ignore(drop_on_export=True)
    def helper(self, x):
        return x
    @torch.jit.ignore
    def helper2(self, x):
        return x
    def forward(self, x):
        return self.helper(x)
