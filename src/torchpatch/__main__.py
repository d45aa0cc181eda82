"""Entry point for ``python -m torchpatch``."""

from torchpatch.frontends.cli import run_and_exit

run_and_exit()
