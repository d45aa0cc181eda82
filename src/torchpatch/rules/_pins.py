"""What the dependency-file rules share: which known torch releases a pin allows, read with packaging."""

from __future__ import annotations

from functools import lru_cache

from torchpatch.dependency_files import tomllib  # imported when a TOML file is first read
from torchpatch.versions import Version


def allowed_releases(specifier) -> list:
    """The platform table's releases (``platform_facts.Release``) that have a patch the specifier allows."""
    from packaging.version import Version as PackagingVersion

    from torchpatch.platform_facts import releases

    return [row for row in releases()
            if any(specifier.contains(PackagingVersion(f"{row.version}.{patch}"), prereleases=True)
                   for patch in range(10))]


def allows_beyond_table(specifier) -> bool:
    """Whether the pin also allows releases newer than the platform table knows (then nothing is certain)."""
    from packaging.version import Version as PackagingVersion

    from torchpatch.platform_facts import releases

    newest = releases()[-1].version
    return any(specifier.contains(PackagingVersion(f"{newest.major}.{minor}.0"), prereleases=True)
               for minor in range(newest.minor + 1, newest.minor + 6))


def version_allowed(specifier, text: str) -> bool:
    """Whether a companion pin allows some patch of ``text`` (``"0.20"`` → 0.20.0 … 0.20.9)."""
    from packaging.version import Version as PackagingVersion

    return any(specifier.contains(PackagingVersion(f"{text}.{patch}"), prereleases=True) for patch in range(10))


def torch_specs_in(ctx) -> list:
    """The torch requirements written in the same file (as RequirementSpans)."""
    from torchpatch.dependency_files import requirements_in

    return [span for span in requirements_in(ctx.path, ctx.text) if span.name == "torch"]


@lru_cache(maxsize=64)
def requires_python(text: str):
    """``[project] requires-python`` of a pyproject.toml text, as a SpecifierSet (None when absent)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        value = tomllib.loads(text).get("project", {}).get("requires-python")
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(value, str):
        return None
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        return None


def release_text(version: Version) -> str:
    return str(version)
