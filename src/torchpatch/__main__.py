"""Entry point for ``python -m torchpatch``."""

import sys

from torchpatch.cli import main

sys.exit(main())
