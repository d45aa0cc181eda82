"""Entry point for ``python -m torchpatch``."""

import sys

from torchpatch.frontends.cli import main

sys.exit(main())
