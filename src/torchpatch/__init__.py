"""torchpatch: make the PyTorch 2.4 → 2.15 changes executable."""

__version__ = "0.1.0"
