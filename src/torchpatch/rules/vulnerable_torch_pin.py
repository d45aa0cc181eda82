"""TP304: a torch pin that only allows releases with a known security flaw in torch.load."""

from __future__ import annotations

from functools import lru_cache

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import NEWEST_KNOWN, v


@lru_cache(maxsize=1)
def _candidates():
    """Versions a pin may allow: every 1.x and 2.x minor up to a few past the newest known, patches 0-9."""
    from packaging.version import Version as PackagingVersion

    return sorted(
        {PackagingVersion(f"1.{minor}.{patch}") for minor in range(14) for patch in range(10)}
        | {PackagingVersion(f"2.{minor}.{patch}") for minor in range(NEWEST_KNOWN.minor + 6) for patch in range(10)}
        | {PackagingVersion("3.0.0")}
    )


class VulnerableTorchPin(Rule):
    """
    ## What it does
    Checks the torch requirement in `requirements*.txt`, `constraints*.txt`, `pyproject.toml`
    (dependencies and optional dependencies) and `setup.cfg`, and reports a pin under which every
    installable release is affected by a security advisory against `torch.load`'s weights-only
    unpickler: CVE-2025-32434 (fixed in 2.6.0) and CVE-2026-24747 (fixed in 2.10.0). The advisories
    come from the same platform table `torchpatch doctor` uses.

    ## Why is this bad?
    Before 2.6, `torch.load(f, weights_only=True)` could still run code from a crafted file
    (CVE-2025-32434, critical), so the usual advice "pass `weights_only=True`" does not protect a
    project pinned below 2.6. Before 2.10 the weights-only unpickler also accepted `SETITEM(S)` on
    non-dict objects and storage size mismatches (CVE-2026-24747). A pin that still allows a fixed
    release (`torch>=2.4`) is not reported: the resolver can install a safe one.
    """

    code = "TP304"
    name = "vulnerable-torch-pin"
    summary = "A torch pin that only allows releases affected by a torch.load advisory"
    changed_in = v("2.6")
    references = (
        "https://github.com/advisories/GHSA-53q9-r3pm-6pq6",
        "https://pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )
    catalog_ids = ("sec.cve-2025-32434", "sec.cve-2026-24747")
    dependencies = frozenset({"torch"})

    VALID = [
        Valid("torch>=2.4\nnumpy\n", filename="requirements.txt"),
        Valid("torch==2.10.0\n", filename="requirements.txt"),
        Valid('[project]\nname = "x"\ndependencies = ["torch>=2.10,<3"]\n', filename="pyproject.toml"),
        Valid("torchvision==0.19.1  # not torch\n", filename="requirements.txt"),
    ]
    INVALID = [
        Invalid("numpy>=1.26\ntorch==2.5.1\n", filename="requirements.txt"),
        Invalid('[project]\nname = "x"\ndependencies = ["numpy", "torch>=2.4,<2.9"]\n', filename="pyproject.toml"),
        Invalid("[options]\ninstall_requires =\n    torch~=2.4.0\n", filename="setup.cfg"),
        Invalid("torch<2.10\n", filename="constraints.txt"),
        Invalid("torch==1.13.1 --hash=sha256:0123  # old\n", filename="requirements-lock.txt"),
        # A local version label (the CUDA build) does not hide the release.
        Invalid("torch==2.7.1+cu118\n", filename="requirements.txt"),
    ]

    def check_requirement(self, ctx, requirement):
        specifier = requirement.requirement.specifier
        if not str(specifier):
            return
        from packaging.version import Version as PackagingVersion

        from torchpatch.platform_facts import cves

        # ``torch==2.7.1+cu118`` (a local label, as uv and pip-compile write for the CUDA index) matches only
        # versions that carry the label: try each candidate with the labels the pin names as well.
        labels = {spec.version.partition("+")[2] for spec in specifier if "+" in spec.version}
        allowed = [candidate for candidate in _candidates()
                   if specifier.contains(candidate, prereleases=True)
                   or any(specifier.contains(PackagingVersion(f"{candidate}+{label}"), prereleases=True)
                          for label in labels)]
        if not allowed:
            return
        newest = max(allowed)
        affected = [advisory for advisory in cves() if advisory.severity == "error"
                    and newest < PackagingVersion(advisory.fixed)]
        if not affected:
            return
        names = ", ".join(f"{advisory.id} (fixed in {advisory.fixed.rsplit('.0', 1)[0]})" for advisory in affected)
        yield ctx.diagnostic(
            requirement,
            f"`{ctx.text[requirement.start:requirement.end]}` allows only torch releases affected by {names}: "
            f"`torch.load(weights_only=True)` is not safe for untrusted files there; require torch>="
            f"{max(PackagingVersion(a.fixed) for a in affected)}",
        )
