"""``torchpatch clean``: remove the result cache."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Remove the result cache that `torchpatch check` keeps (.torchpatch_cache, or --cache-dir)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, help="the cache to remove (default: .torchpatch_cache, "
                                                       "or $TORCHPATCH_CACHE_DIR)")


def run(args: argparse.Namespace) -> int:
    from torchpatch.engine.cache import clean, default_cache_dir
    from torchpatch.frontends.cli import UsageError

    folder = args.cache_dir or default_cache_dir()
    try:
        removed = clean(folder)
    except OSError as error:
        raise UsageError(str(error)) from None
    print(f"Removed {folder}" if removed else f"No cache at {folder}")
    return 0
