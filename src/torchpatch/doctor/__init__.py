"""The environment doctor: inspect a PyTorch install (or plan one) and say exactly what to install."""
