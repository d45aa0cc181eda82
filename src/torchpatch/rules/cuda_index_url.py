"""TP307: a download.pytorch.org CUDA index with no build of the pinned torch."""

from __future__ import annotations

import re

from torchpatch.rules._pins import allowed_releases, allows_beyond_table, torch_specs_in
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_PYTORCH_INDEX = re.compile(r"^https?://download\.pytorch\.org/whl/(?:(?:nightly|test)/)?(?P<tag>cu\d+|rocm[\d.]+|cpu|xpu)/?$")


class CudaIndexUrl(Rule):
    """
    ## What it does
    In requirements files, flags an `--index-url` / `--extra-index-url` of download.pytorch.org for a
    CUDA build (`…/whl/cu118`) when none of the torch releases the file's pin allows was built for
    that CUDA version. The builds of each release come from the platform table `torchpatch doctor`
    uses (RELEASE.md's compatibility matrix, checked against the wheels where noted there).

    ## Why is this bad?
    The index has no matching wheel, so pip fails (`--index-url`) or quietly installs PyPI's default
    CUDA build instead (`--extra-index-url`), which may need a newer driver than the machine has. For
    example cu118 has no wheels after 2.7 and cu128 none after 2.11.
    """

    code = "TP307"
    name = "cuda-index-url"
    summary = "A download.pytorch.org CUDA index with no build of the pinned torch"
    changed_in = v("2.5")
    references = ("https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix",)
    catalog_ids = ("plat.cuda-matrix-2.12+", "plat.cuda-default-pypi")
    dependencies = frozenset({"torch"})

    VALID = [
        Valid("--index-url https://download.pytorch.org/whl/cu126\ntorch==2.10.0\n", filename="requirements.txt"),
        Valid("--extra-index-url https://download.pytorch.org/whl/cu126\ntorch>=2.6\n", filename="requirements.txt"),
        Valid("--index-url https://download.pytorch.org/whl/cu118\ntorch\n", filename="requirements.txt"),
    ]
    INVALID = [
        Invalid("--index-url https://download.pytorch.org/whl/cu118\ntorch==2.9.1\n", filename="requirements.txt"),
        Invalid("--extra-index-url=https://download.pytorch.org/whl/cu128\ntorch>=2.12,<2.14\n",
                filename="requirements-gpu.txt"),
    ]

    def check_requirement(self, ctx, requirement):
        if ctx.path.suffix != ".txt":
            return
        from torchpatch.dependency_files import index_urls

        pins = torch_specs_in(ctx)
        if not pins or requirement != pins[0]:
            return  # once per file
        specifier = requirement.requirement.specifier
        if not str(specifier) or allows_beyond_table(specifier):
            return
        releases = allowed_releases(specifier)
        if not releases:
            return
        for index in index_urls(ctx.text):
            match = _PYTORCH_INDEX.match(index.url)
            if match is None or not match.group("tag").startswith("cu"):
                continue
            tag = match.group("tag")
            if any(row.build(tag) is not None for row in releases):
                continue
            having = sorted({build.tag for row in releases for build in row.builds if build.tag.startswith("cu")})
            yield ctx.diagnostic(index, f"download.pytorch.org has no {tag} build of "
                                        f"`{ctx.text[requirement.start:requirement.end]}`; its builds are "
                                        f"{', '.join(having)}")
