import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import nn as tnn
from torch.nn import CrossEntropyLoss, NLLLoss, MSELoss

logits = torch.randn(8, 5)
target = torch.randint(0, 5, (8,))
pred = torch.randn(8, 5)
real = torch.randn(8, 5)
prob = torch.rand(8, 5)
labels = torch.rand(8, 5).round()

loss1 = F.cross_entropy(logits, target, size_average=False)
loss2 = F.nll_loss(F.log_softmax(logits, dim=1), target, reduce=False)
loss3 = F.mse_loss(pred, real, reduction="elementwise_mean")
loss4 = F.binary_cross_entropy(prob, labels, size_average=True)
loss5 = F.binary_cross_entropy_with_logits(pred, labels, reduce=True)
loss6 = F.smooth_l1_loss(pred, real, reduction="elementwise_mean")
loss7 = F.l1_loss(pred, real, size_average=False, reduce=True)
loss8 = F.nll_loss(F.log_softmax(logits, 1), target, None, False)
crit_a = nn.CrossEntropyLoss(size_average=False)
crit_b = NLLLoss(reduce=False)
crit_c = MSELoss(reduction="elementwise_mean")  # warns where called
crit_d = tnn.BCEWithLogitsLoss(size_average=True)
crit_e = nn.SmoothL1Loss(reduction="elementwise_mean")  # warns where called
crit_f = nn.L1Loss(None, False)
crit_g = nn.HingeEmbeddingLoss(size_average=False)
crit_h = nn.MultiLabelSoftMarginLoss(reduce=False)
crit_i = nn.CosineEmbeddingLoss(size_average=False)
crit_j = nn.MarginRankingLoss(reduce=False)
loss9 = F.soft_margin_loss(pred, labels * 2 - 1, size_average=False)
loss10 = F.poisson_nll_loss(pred, real.abs(), reduce=False)
loss11 = F.kl_div(F.log_softmax(logits, -1), prob.softmax(-1), size_average=False)
loss12 = F.multilabel_soft_margin_loss(pred, labels, size_average=True)
loss13 = F.huber_loss(pred, real, reduction="elementwise_mean")
mse_c = crit_c(pred, real)
smooth_e = crit_e(pred, real)

ok1 = F.cross_entropy(logits, target, reduction="sum")
ok2 = nn.CrossEntropyLoss(reduction="none")(logits, target)
ok3 = F.mse_loss(pred, real)
ok4 = CrossEntropyLoss(label_smoothing=0.1)(logits, target)
ok5 = F.nll_loss(F.log_softmax(logits, 1), target, None, None, -100, None, "sum")
