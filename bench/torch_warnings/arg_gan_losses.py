import torch
from torch import nn
from torch.nn import functional as F


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1)


netD = Discriminator()
criterion = nn.BCELoss(size_average=True)
real = torch.randn(6, 4)
fake = torch.randn(6, 4)
label_real = torch.ones(6)
label_fake = torch.zeros(6)
errD_real = criterion(netD(real), label_real)
errD_fake = F.binary_cross_entropy(netD(fake), label_fake, size_average=True)
errG = F.binary_cross_entropy(netD(fake), label_real, reduction="elementwise_mean")
l1 = nn.L1Loss(reduce=True)
recon = l1(fake, real)
smooth = F.smooth_l1_loss(fake, real, size_average=False)
hinge = F.hinge_embedding_loss(fake, torch.ones(6, 4), reduce=False)
cos = F.cosine_embedding_loss(fake, real, torch.ones(6), size_average=False)
margin = F.margin_ranking_loss(fake[:, 0], real[:, 0], torch.ones(6), reduce=True)
triplet = nn.TripletMarginLoss(margin=1.0, size_average=False)
trip = triplet(real, fake, fake.flip(0))
mlm = F.multi_margin_loss(fake, torch.tensor([0, 1, 2, 3, 0, 1]), size_average=False)
pnll = nn.PoissonNLLLoss(reduce=False)
ok1 = nn.BCELoss()(netD(real), label_real)
ok2 = F.binary_cross_entropy(netD(fake), label_fake, reduction="mean")
ok3 = nn.TripletMarginLoss(margin=1.0, reduction="sum")(real, fake, fake.flip(0))
