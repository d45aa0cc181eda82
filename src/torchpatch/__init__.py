"""torchpatch: make the PyTorch 2.4 → 2.15 changes executable."""

__version__ = "0.1.0"

#: Where torchpatch installs from: it is not on the package index yet, so every install hint names the repository.
REPOSITORY_URL = "https://github.com/torchpatch/torchpatch"


def install_hint(extra: str) -> str:
    """The pip command that installs torchpatch with an extra, from its repository."""
    return f"pip install 'torchpatch[{extra}] @ git+{REPOSITORY_URL}'"
