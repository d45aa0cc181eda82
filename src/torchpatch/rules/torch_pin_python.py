"""TP306: a torch pin with no wheel for any Python version the project allows."""

from __future__ import annotations

from torchpatch.rules._pins import allowed_releases, allows_beyond_table, requires_python
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: CPython minor versions worth checking (3.8 … 3.16).
_PYTHONS = tuple((3, minor) for minor in range(8, 17))


class TorchPinPython(Rule):
    """
    ## What it does
    Flags a torch requirement when none of the releases it allows has a wheel for any Python version
    the project allows: `requires-python` in `pyproject.toml`, or `python=3.x` in an `environment.yml`.
    The Python range of each release (its wheels' `Requires-Python` and tags) comes from the platform
    table `torchpatch doctor` uses.

    ## Why is this bad?
    `pip install` finds no distribution (`No matching distribution found for torch==2.4.1` on Python
    3.13) and conda fails to solve. 2.6 dropped Python 3.8, 2.9 dropped 3.9 and 2.15 dropped 3.10;
    3.13 wheels start with 2.6.
    """

    code = "TP306"
    name = "torch-pin-python"
    summary = "A torch pin with no wheel for the project's Python versions"
    changed_in = v("2.6")
    references = ("https://github.com/pytorch/pytorch/blob/main/RELEASE.md",)
    catalog_ids = ("plat.python-support",)
    dependencies = frozenset({"torch"})

    VALID = [
        Valid('[project]\nname = "x"\nrequires-python = ">=3.10"\ndependencies = ["torch>=2.4"]\n',
              filename="pyproject.toml"),
        Valid('[project]\nname = "x"\ndependencies = ["torch==2.10.0"]\n', filename="pyproject.toml"),
        Valid("dependencies:\n  - python=3.14\n  - pytorch=2.10.0\n", filename="environment.yml"),
        # Releases after the table's newest may add Python 3.16: nothing certain.
        Valid('[project]\nname = "x"\nrequires-python = ">=3.16"\ndependencies = ["torch>=2.10"]\n',
              filename="pyproject.toml"),
    ]
    INVALID = [
        Invalid('[project]\nname = "x"\nrequires-python = ">=3.13"\ndependencies = ["torch==2.4.1"]\n',
                filename="pyproject.toml"),
        Invalid("dependencies:\n  - python=3.8\n  - pip:\n    - torch>=2.6\n", filename="environment.yml"),
    ]

    def check_requirement(self, ctx, requirement):
        pythons = _allowed_pythons(ctx)
        specifier = requirement.requirement.specifier
        if pythons is None or not str(specifier):
            return
        releases = allowed_releases(specifier)
        if not releases:
            return
        if any(row.supports_python(python) for row in releases for python in pythons):
            return
        # A release after the table's newest may add newer Pythons (never re-add older ones).
        if allows_beyond_table(specifier) and (not pythons or max(pythons) > max(row.python_max for row in releases)):
            return
        names = ", ".join(f"{row.version} ({row.python_range_text})" for row in releases[:4])
        wanted = ", ".join(f"{major}.{minor}" for major, minor in pythons[:4])
        yield ctx.diagnostic(requirement, f"`{ctx.text[requirement.start:requirement.end]}` has no wheel for Python "
                                          f"{wanted}: the torch releases it allows support {names}")


def _allowed_pythons(ctx) -> list[tuple[int, int]] | None:
    from packaging.version import Version as PackagingVersion

    if ctx.path.name == "pyproject.toml":
        specifier = requires_python(ctx.text)
        if specifier is None:
            return None
        return [python for python in _PYTHONS
                if any(specifier.contains(PackagingVersion(f"{python[0]}.{python[1]}.{patch}")) for patch in range(10))]
    if ctx.path.suffix in (".yml", ".yaml"):
        from torchpatch.dependency_files import conda_environment

        python = conda_environment(ctx.text).python
        if python is None or not str(python.requirement.specifier):
            return None
        specifier = python.requirement.specifier
        return [candidate for candidate in _PYTHONS
                if any(specifier.contains(PackagingVersion(f"{candidate[0]}.{candidate[1]}.{patch}"))
                       for patch in range(10))]
    return None
