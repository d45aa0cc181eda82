"""Command-line front end: ``torchpatch check|rule|audit|doctor|changes|skill|mcp``."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from torchpatch import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from typing import NoReturn
    import argparse

#: (command, module, one-line help). Each module defines HELP, add_arguments(parser) and run(args) -> exit code;
#: only the module of the command being run is imported, so ``check`` starts fast.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("check", "torchpatch.frontends.check", "Check Python files and notebooks for outdated and unsafe PyTorch usage."),
    ("rule", "torchpatch.frontends.rule", "Explain a rule, or list them all."),
    ("audit", "torchpatch.frontends.audit", "Audit checkpoints without loading them."),
    ("doctor", "torchpatch.frontends.doctor", "Diagnose the PyTorch install and say what to install."),
    ("changes", "torchpatch.frontends.changes", "Upgrade report: what changed between two releases, and what hits this project."),
    ("skill", "torchpatch.frontends.skill", "Write the knowledge as an Agent Skill for coding agents."),
    ("mcp", "torchpatch.frontends.mcp_server", "Serve the knowledge and the checker to coding agents over MCP (stdio)."),
    ("server", "torchpatch.frontends.server", "Run the language server for editors (extra: lsp)."),
    ("clean", "torchpatch.frontends.clean", "Remove the result cache (.torchpatch_cache)."),
)

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """A usage or configuration error: printed as one line, exit code 2."""


def _parser_class() -> type:
    """argparse, but a usage error is one line on stderr (``torchpatch check: error: ...``) and exit code 2,
    with a close match for a mistyped option or choice (what Python 3.14's ``suggest_on_error`` adds).
    Defined on first use: a plain ``check`` is read without argparse (check.quick_arguments)."""
    global _Parser
    if _Parser is None:
        import argparse

        class Parser(argparse.ArgumentParser):
            def __init__(self, *args, **kwargs) -> None:
                kwargs.setdefault("allow_abbrev", False)  # as ruff: `--selec` is a mistake to point out, not `--select`
                super().__init__(*args, **kwargs)

            def error(self, message: str) -> NoReturn:
                self.exit(EXIT_ERROR, f"{self.prog}: error: {message}{self._suggestion(message)}\n")

            def _suggestion(self, message: str) -> str:
                import difflib
                import re

                choice = re.match(r"argument .*?: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
                if choice:
                    options = re.findall(r"'([^']*)'", choice.group(2)) or [c.strip() for c in choice.group(2).split(",")]
                    close = difflib.get_close_matches(choice.group(1), options, n=1)
                    return f"; did you mean '{close[0]}'?" if close else ""
                unknown = re.match(r"unrecognized arguments: (.*)$", message)
                if unknown:
                    known = [option for option in self._option_string_actions if option.startswith("--")]
                    for word in unknown.group(1).split():
                        if word.startswith("--"):
                            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1)
                            if close:
                                return f"; did you mean '{close[0]}'?"
                return ""

        _Parser = Parser
    return _Parser


_Parser: type | None = None


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser; the arguments of ``selected`` (or of every command when None) are fully declared."""
    parser_class = _parser_class()
    parser = parser_class(prog="torchpatch", description="Find, explain and fix outdated and unsafe PyTorch usage.")
    parser.add_argument("--version", action="version", version=f"torchpatch {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    parser.set_defaults(_subparsers=commands)
    for name, module_name, summary in COMMANDS:
        if selected is not None and name != selected:
            commands.add_parser(name, help=summary, description=summary)
            continue
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=summary, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def _selected_command(argv: Sequence[str]) -> str | None:
    for argument in argv:
        if not argument.startswith("-"):
            return argument if argument in {name for name, _, _ in COMMANDS} else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _selected_command(argv)
    if command != "check":
        return _main(argv, command)
    # A check makes no reference cycle worth collecting before its files are checked (and then the engine
    # collects only as the live objects grow: parallel._Job), while the imports and the settings would have
    # the collector walk every module's objects again and again: 30-40 collections, a tenth of a one-file run.
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, command)
    finally:
        if enabled:
            gc.enable()


def run_and_exit() -> NoReturn:
    """The ``torchpatch`` command and ``python -m torchpatch``: ``main``, then, after a check, the process ends at
    once, its output flushed (``os._exit``): tearing the interpreter down frees, one by one, every object the
    rules, tables and trees made, a fifth of a one-file check (issue 27; mypy ends its runs so too). Not after
    Ray (its shutdown runs at exit) nor when the output cannot be flushed (the normal exit reports it)."""
    argv = sys.argv[1:]
    code = main(argv)
    if _selected_command(argv) == "check" and "ray" not in sys.modules:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def _main(argv: list[str], command: str | None) -> int:
    if command == "check":
        from torchpatch.frontends import check

        args = check.quick_arguments(argv)
        if args is not None:
            return _run(args, check.run)
    parser = build_parser(command)
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # said by the subcommand's parser, so the error names it (`torchpatch check: error: ...`)
            command = getattr(args, "command", None)
            owner = args._subparsers.choices.get(command, parser) if command else parser
            owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exit_request:  # --help, --version, or a usage error already printed
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_ERROR
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    return _run(args, args._run)


def _run(args, run) -> int:
    try:
        return int(run(args))
    except UsageError as error:
        print(f"torchpatch {args.command}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("torchpatch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): what was left unprinted is unknown, so never claim a clean run.
        # ``check`` handles this itself and returns its real exit code.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FINDINGS
    except Exception as error:  # an internal failure must never look like a clean run
        print(f"torchpatch {args.command}: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_ERROR
