"""TP308: a torchvision or torchaudio pin that does not match the torch pin beside it."""

from __future__ import annotations

from torchpatch.rules._pins import allowed_releases, allows_beyond_table, torch_specs_in, version_allowed
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v


class CompanionPinMismatch(Rule):
    """
    ## What it does
    Flags a `torchvision` or `torchaudio` requirement when no release it allows matches any torch
    release the same file's torch pin allows (torchvision 0.19 goes with torch 2.4, 0.20 with 2.5, …;
    torchaudio follows torch's number). The pairs come from the platform table `torchpatch doctor`
    uses (the companions' wheel metadata pins `torch==` exactly).

    ## Why is this bad?
    The resolver fails (`ResolutionImpossible`), or, where the companion's pin is loose, replaces the
    torch you pinned with the one the companion needs.
    """

    code = "TP308"
    name = "companion-pin-mismatch"
    summary = "A torchvision/torchaudio pin that does not match the torch pin"
    changed_in = v("2.4")
    references = ("https://github.com/pytorch/vision#installation",)
    catalog_ids = ("plat.dependency-pins",)
    dependencies = frozenset({"torchvision", "torchaudio"})

    VALID = [
        Valid("torch==2.10.0\ntorchvision==0.25.0\ntorchaudio==2.10.0\n", filename="requirements.txt"),
        # torchaudio stopped at 2.11 and serves every later torch.
        Valid("torch==2.13.0\ntorchaudio==2.11.1\n", filename="requirements.txt"),
        Valid("torch>=2.4\ntorchvision>=0.20\n", filename="requirements.txt"),
        Valid("torchvision==0.19.1\n", filename="requirements.txt"),
    ]
    INVALID = [
        Invalid("torch==2.5.1\ntorchvision==0.19.1\n", filename="requirements.txt"),
        Invalid('[project]\nname = "x"\ndependencies = ["torch>=2.6,<2.7", "torchaudio==2.5.0"]\n',
                filename="pyproject.toml"),
    ]

    def check_requirement(self, ctx, requirement):
        specifier = requirement.requirement.specifier
        if not str(specifier):
            return
        pins = torch_specs_in(ctx)
        if not pins:
            return
        torch_spec = pins[0].requirement.specifier
        if not str(torch_spec) or allows_beyond_table(torch_spec):
            return
        releases = allowed_releases(torch_spec)
        if not releases:
            return
        field = "torchvision" if requirement.name == "torchvision" else "torchaudio"
        matching = [getattr(row, field) for row in releases if getattr(row, field)]
        if not matching or any(version_allowed(specifier, text) for text in matching):
            return
        pinned = ctx.text[pins[0].start:pins[0].end]
        yield ctx.diagnostic(requirement, f"`{ctx.text[requirement.start:requirement.end]}` does not match "
                                          f"`{pinned}`: that torch needs {field} "
                                          f"{' or '.join(sorted(set(matching)))}")
