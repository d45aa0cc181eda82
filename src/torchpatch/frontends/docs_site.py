"""Writes every generated page of the documentation site, the CLI reference included: ``python -m torchpatch.frontends.docs_site``."""

from __future__ import annotations

from pathlib import Path

from torchpatch.docs import REPOSITORY, render_cli_reference, render_site, write_pages
from torchpatch.frontends.cli import build_parser


def render_everything(root: Path = REPOSITORY) -> dict[Path, str]:
    """What the core renders (rules, settings, the rules' nav) and docs/cli.md from the command's own parser."""
    pages = render_site(root)
    pages[root / "docs" / "cli.md"] = render_cli_reference(build_parser())
    return pages


def main() -> None:
    write_pages(render_everything())


if __name__ == "__main__":
    main()
