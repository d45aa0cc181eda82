"""TP305: an environment.yml that installs torch from the `pytorch` conda channel, which stopped at 2.5."""

from __future__ import annotations

from torchpatch.rules._pins import allowed_releases, allows_beyond_table
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v


class CondaPytorchChannel(Rule):
    """
    ## What it does
    In `environment.yml` files, flags the `pytorch` channel (under `channels:` or as a `pytorch::`
    prefix) when the file's torch requirement allows a release after 2.5.

    ## Why is this bad?
    PyTorch stopped publishing conda packages with 2.6 (announced in the 2.5 release notes): the
    `pytorch` channel's newest PyTorch is 2.5.1, so an environment that asks for a newer torch from it
    fails to solve, or silently gets 2.5.1 or a conda-forge build instead. Install torch with pip (a
    `pip:` section, with the `https://download.pytorch.org/whl/cuXXX` index for a CUDA build) or from
    conda-forge.
    """

    code = "TP305"
    name = "conda-pytorch-channel"
    summary = "environment.yml takes torch from the `pytorch` conda channel, which has nothing after 2.5"
    removed_in = v("2.6")
    references = ("https://github.com/pytorch/pytorch/issues/138506",)
    catalog_ids = ("plat.conda-channel",)
    dependencies = frozenset({"torch"})

    VALID = [
        Valid("channels:\n  - conda-forge\ndependencies:\n  - pytorch>=2.10\n", filename="environment.yml"),
        # torch from pip; the pytorch channel only serves other packages here.
        Valid("channels:\n  - pytorch\ndependencies:\n  - pip\n  - pip:\n    - torch==2.10.0\n",
              filename="environment.yml"),
    ]
    INVALID = [
        Invalid("channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.6.0\n  - pytorch-cuda=12.4\n",
                filename="environment.yml"),
        Invalid("channels:\n  - conda-forge\ndependencies:\n  - pytorch::pytorch>=2.4\n", filename="environment.yml"),
        Invalid("channels:\n  - pytorch\ndependencies:\n  - python=3.11\n  - pytorch\n", filename="environment.yml"),
    ]

    def check_requirement(self, ctx, requirement):
        if ctx.path.suffix not in (".yml", ".yaml"):
            return
        from torchpatch.dependency_files import conda_environment

        environment = conda_environment(ctx.text)
        conda_spans = [span for span in environment.requirements if span.name == "torch"
                       and not _in_pip_section(ctx.text, span.start)]
        if not conda_spans or requirement != conda_spans[0]:
            return  # reported once per file, and only for torch from conda (not from a pip: section)
        specifier = requirement.requirement.specifier
        newer = [row for row in allowed_releases(specifier) if row.version >= v("2.6")]
        if not newer and not allows_beyond_table(specifier):
            return
        for name, start, end in environment.channels:
            if name == "pytorch":
                yield ctx.diagnostic(_Span(start, end),
                                     "the `pytorch` conda channel has no PyTorch after 2.5.1 (conda packages stopped "
                                     f"with 2.6), but `{ctx.text[requirement.start:requirement.end]}` allows newer: "
                                     "install torch with pip or from conda-forge")


class _Span:
    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


def _in_pip_section(text: str, offset: int) -> bool:
    """Whether the dependency at ``offset`` sits in a ``- pip:`` list (deeper than the conda items)."""
    line_start = text.rfind("\n", 0, offset) + 1
    indent = len(text[line_start:offset]) - len(text[line_start:offset].lstrip(" -"))
    before = text[:line_start].splitlines()
    for line in reversed(before):
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        current = len(stripped) - len(stripped.lstrip(" -"))
        if current < indent:
            return stripped.strip().lstrip("-").strip() == "pip:"
        if not line.startswith(" "):
            return False
    return False
