"""The options of large scans (``--executor``, ``--report``, ``--files-from``, ``--resume``) and whether a run
asks for one: what every ``check`` and ``audit`` needs at start-up, apart from ``scan``, which runs them."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("large scans")
    group.add_argument("--executor", choices=("local", "ray"), default="local",
                       help="where files are checked: this machine (default), or a Ray cluster (extra [ray])")
    group.add_argument("--ray-address", metavar="ADDRESS",
                       help="join this Ray cluster (default: $RAY_ADDRESS, else start a local one)")
    group.add_argument("--report", type=Path, metavar="PATH",
                       help="also write one row per input file to PATH (.jsonl, or .parquet with pyarrow)")
    group.add_argument("--files-from", metavar="FILE", help="read paths, one per line, from FILE (- for stdin)")
    group.add_argument("--resume", type=Path, metavar="REPORT",
                       help="skip files whose row in REPORT is still valid (same path, size, mtime, settings)")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.executor != "local" or args.ray_address or args.report or args.files_from or args.resume
                or any(_is_url(str(p)) for p in args.paths))


def _is_url(name: str) -> bool:
    if "://" not in name:  # remote_files.is_url needs one (its module imports what a local check never uses)
        return False
    from torchpatch.frontends.executors import remote_files

    return remote_files.is_url(name)
