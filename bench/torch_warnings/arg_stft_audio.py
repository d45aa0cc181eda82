import torch


def spectrogram(wav, n_fft=64, hop=16):
    spec = torch.stft(wav, n_fft, hop_length=hop, return_complex=True)
    return spec.abs()


def spectrogram_real(wav, n_fft=64):
    window = torch.hann_window(n_fft)
    return torch.stft(wav, n_fft=n_fft, hop_length=16, window=window, return_complex=False)


wav = torch.randn(2, 800)
s1 = spectrogram(wav)
s2 = spectrogram_real(wav)
s3 = wav.stft(64, return_complex=True)
s4 = wav.stft(n_fft=64, hop_length=16, window=torch.hann_window(64), return_complex=False)
s5 = torch.stft(wav, 64, 16, 64, None, True, "reflect", False, None, True)
ok1 = torch.stft(wav, 64, hop_length=16, window=torch.hann_window(64), return_complex=True)
ok2 = wav.stft(64, window=torch.hamming_window(64), return_complex=True)
