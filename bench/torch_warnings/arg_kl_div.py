import torch
import torch.nn as nn
import torch.nn.functional as F


class Distiller(nn.Module):
    def __init__(self, temperature=2.0):
        super().__init__()
        self.t = temperature
        self.kl = nn.KLDivLoss()  # warns where called
        self.kl_sum = nn.KLDivLoss(reduction="sum")

    def forward(self, student, teacher):
        soft = F.log_softmax(student / self.t, dim=-1)
        hard = F.softmax(teacher / self.t, dim=-1)
        a = self.kl(soft, hard)
        b = F.kl_div(soft, hard)
        c = F.kl_div(soft, hard, reduction="mean")
        d = F.kl_div(input=soft, target=hard, reduction="batchmean")
        e = self.kl_sum(soft, hard)
        f = F.kl_div(soft, hard, None, None, "mean")
        return a + b + c + d + e + f


student = torch.randn(4, 10)
teacher = torch.randn(4, 10)
model = Distiller()
out = model(student, teacher)
kl_loss = nn.KLDivLoss(log_target=True)  # warns where called
val = kl_loss(F.log_softmax(student, -1), F.log_softmax(teacher, -1))
ok = nn.KLDivLoss(reduction="batchmean", log_target=True)(F.log_softmax(student, -1), F.log_softmax(teacher, -1))
