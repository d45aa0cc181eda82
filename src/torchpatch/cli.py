"""Command-line front end: ``torchpatch check|rule|audit|doctor``."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn, Sequence

from torchpatch import __version__

#: (command, module). Each module defines HELP, add_arguments(parser) and run(args) -> exit code.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("check", "torchpatch.commands.check"),
    ("rule", "torchpatch.commands.rule"),
    ("audit", "torchpatch.audit.command"),
    ("doctor", "torchpatch.doctor.command"),
)

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """A usage or configuration error: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="torchpatch", description="Find, explain and fix outdated and unsafe PyTorch usage.")
    parser.add_argument("--version", action="version", version=f"torchpatch {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS:
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # --help, --version, or a usage error already printed
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_ERROR
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(args._run(args))
    except UsageError as error:
        print(f"torchpatch {args.command}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("torchpatch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as error:  # an internal failure must never look like a clean run
        print(f"torchpatch {args.command}: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_ERROR
