"""A small training project written for PyTorch 2.3 habits: the kind of code torchpatch migrates."""
