"""``torchpatch server``: the language server, for editors (needs the ``lsp`` extra)."""

from __future__ import annotations

import argparse

from torchpatch import install_hint

HELP = ("Run the language server on stdin/stdout: diagnostics, fixes, 'disable for this line' and rule pages "
        f"in any LSP editor (extra: lsp; {install_hint('lsp')}).")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="talk LSP over stdin/stdout (the default; accepted for clients that pass it)")


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    try:
        from torchpatch.frontends.lsp import serve
    except ImportError as error:
        raise UsageError(f"the language server needs the lsp extra ({error.name} is missing): "
                         f"{install_hint('lsp')}") from None
    serve()
    return 0
