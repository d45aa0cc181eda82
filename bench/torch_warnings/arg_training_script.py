import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self, n_in=8, n_classes=4):
        super(Classifier, self).__init__()
        self.fc1 = nn.Linear(n_in, 16)
        self.fc2 = nn.Linear(16, n_classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x))


def train(model, loader, optimizer, scheduler, epoch):
    model.train()
    total = 0.0
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target, size_average=False)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            probs = F.softmax(output.exp())
            pred = probs.argmax(1)
            correct += (pred == target).sum().item()
            _ = F.cross_entropy(output, target, reduce=False)
    return correct


ds = TensorDataset(torch.randn(16, 8), torch.randint(0, 4, (16,)))
loader = DataLoader(ds, batch_size=8, shuffle=True)
model = Classifier()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 3):
    train(model, loader, optimizer, scheduler, epoch)
    evaluate(model, loader)
    scheduler.step(epoch)
