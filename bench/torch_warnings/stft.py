import torch
sig = torch.randn(400)
a = torch.stft(sig, 64, return_complex=True)
w = torch.hann_window(64)
b = torch.stft(sig, 64, window=w, return_complex=False)
ok = torch.stft(sig, 64, window=w, return_complex=True)
