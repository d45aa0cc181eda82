"""Choose the torch release and wheel build that fit a machine (Python, GPUs, driver) and spell the install."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from torchpatch import platform_facts as facts
from torchpatch.platform_facts import Build, Release, capability_text
from torchpatch.versions import Version

FULL, MINOR_COMPAT, DRIVER_UNKNOWN, NO_DRIVER_NEEDED = "full", "minor-compat", "driver-unknown", "cpu"


@dataclass(frozen=True)
class Machine:
    """What a wheel must fit. None means unknown (not constrained)."""

    python: tuple[int, int] | None
    gpus: tuple[tuple[int, int], ...]
    driver: tuple[int, ...] | None
    #: An NVIDIA GPU is present even if no capability is known (driver seen, or nvidia-smi without compute_cap).
    nvidia: bool = False
    #: The C library of a Linux machine, e.g. (2, 17) on CentOS 7; None when unknown or not glibc.
    glibc: tuple[int, ...] | None = None

    @property
    def wants_cuda(self) -> bool:
        return bool(self.gpus) or self.nvidia

    @property
    def python_text(self) -> str:
        return f"{self.python[0]}.{self.python[1]}" if self.python else "any"


@dataclass(frozen=True)
class Choice:
    """One install that fits: a release, its build and how the driver relates to it."""

    release: Release
    build: Build
    version: str
    driver_mode: str
    notes: tuple[str, ...] = field(default=())

    def command(self, companions: Sequence[str] = (), replace_same_version: bool = False) -> str:
        """The exact pip command; ``replace_same_version`` uninstalls first because pip keeps an installed
        2.13.0+cpu when asked for torch==2.13.0 from another index."""
        parts = [f"torch=={self.version}"]
        for name in companions:
            pin = companion_pin(self.release, name)
            if pin:
                parts.append(pin)
        install = f"pip install {' '.join(parts)} --index-url {self.build.index_url}"
        return f"pip uninstall -y torch && {install}" if replace_same_version else install

    @property
    def label(self) -> str:
        return f"torch {self.version} ({self.build.tag})"


def companion_pin(release: Release, name: str) -> str:
    """``torchvision==0.26.*`` for torch 2.11; empty when no companion release exists for it."""
    minor = {"torchvision": release.torchvision, "torchaudio": release.torchaudio}.get(name, "")
    return f"{name}=={minor}.*" if minor else ""


def _driver_mode(build: Build, driver: tuple[int, ...] | None) -> tuple[str | None, str]:
    """(mode, reason when rejected) for a build under a driver."""
    if build.cuda is None:
        return NO_DRIVER_NEEDED, ""
    requirement = facts.driver_requirement(build.cuda)
    if driver is None or requirement is None:
        return DRIVER_UNKNOWN, ""
    if driver >= requirement.toolkit_driver:
        return FULL, ""
    if driver >= requirement.minor_compat_driver:
        return MINOR_COMPAT, ""
    need = requirement.minor_compat_text
    return None, f"{build.tag} needs driver >= {need}"


def _arch_text(build: Build) -> str:
    archs = " ".join(capability_text(arch) for arch in build.archs)
    return archs + (f" +PTX {capability_text(build.ptx)}" if build.ptx else "")


def fits(release: Release, machine: Machine) -> tuple[list[Choice], list[str]]:
    """Every build of a release that fits the machine, best first, and why the others do not."""
    reasons: list[str] = []
    if machine.python and not release.supports_python(machine.python):
        return [], [f"torch {release.version} has wheels for Python {release.python_range_text} only"]
    choices: list[Choice] = []
    for build in release.builds:
        if machine.wants_cuda != (build.cuda is not None):
            continue
        # 2.7 moved the Linux wheels from manylinux1 file names to manylinux_2_28 (2.6 already for cu126):
        # CentOS 7 (glibc 2.17) and other old distributions cannot install them.
        needs = _manylinux_glibc(build.platform_tag)
        if machine.glibc and needs and machine.glibc < needs:
            have = ".".join(map(str, machine.glibc))
            reasons.append(f"{build.tag} is {build.platform_tag}: it needs glibc >= 2.28, this system has {have}")
            continue
        missing = [cap for cap in machine.gpus if not build.runs_on(cap)]
        if missing:
            gpus = ", ".join(capability_text(cap) for cap in missing)
            reasons.append(f"{build.tag} has no kernels for {gpus} ({_arch_text(build)})")
            continue
        mode, reason = _driver_mode(build, machine.driver)
        if mode is None:
            reasons.append(reason)
            continue
        choices.append(Choice(release, build, release.latest_patch, mode, _notes(release, build, mode, machine)))
    rank = {FULL: 3, NO_DRIVER_NEEDED: 3, DRIVER_UNKNOWN: 2, MINOR_COMPAT: 1}
    choices.sort(
        key=lambda choice: (
            rank[choice.driver_mode],
            choice.build.tag == release.pypi_default,
            choice.build.verified,
            _cuda_key(choice.build),
        ),
        reverse=True,
    )
    return choices, reasons


def _manylinux_glibc(tag: str) -> tuple[int, int] | None:
    """``manylinux_2_28_x86_64`` → (2, 28); None for tags without a glibc version (manylinux1)."""
    parts = tag.split("_")
    if len(parts) > 3 and parts[0] == "manylinux" and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return None


def _cuda_key(build: Build) -> tuple[int, ...]:
    return facts.dotted(build.cuda) if build.cuda else (0,)


def _notes(release: Release, build: Build, mode: str, machine: Machine) -> tuple[str, ...]:
    notes = []
    if mode == MINOR_COMPAT and build.cuda:
        requirement = facts.driver_requirement(build.cuda)
        assert requirement is not None
        toolkit = requirement.toolkit_text
        notes.append(
            f"the driver runs CUDA {build.cuda} through NVIDIA minor-version compatibility (no PTX JIT); "
            f"driver >= {toolkit} gives the full feature set"
        )
        ptx_only = [cap for cap in machine.gpus if not any(a[0] == cap[0] and a[1] <= cap[1] for a in build.archs)]
        if ptx_only:
            notes.append(
                f"{', '.join(map(capability_text, ptx_only))} would need PTX JIT, which minor-version compatibility "
                "does not allow: upgrade the driver"
            )
    if mode == DRIVER_UNKNOWN and build.cuda:
        requirement = facts.driver_requirement(build.cuda)
        if requirement:
            notes.append(
                f"needs NVIDIA driver >= {requirement.minor_compat_text} "
                f"(>= {requirement.toolkit_text} for the full CUDA {build.cuda} feature set)"
            )
    for advisory in facts.cves():
        if advisory.severity == "error" and advisory.affects(release.latest_patch):
            notes.append(f"torch {release.latest_patch} is affected by {advisory.id} (fixed in {advisory.fixed})")
    if machine.nvidia and not machine.gpus and build.cuda:
        notes.append(
            "the GPU's compute capability is unknown: check it is in this build's list (" + _arch_text(build) + ")"
        )
    if not build.verified:
        notes.append(
            f"unverified: {build.tag} of torch {release.version} was not read from a real wheel ({build.note or build.source})"
        )
    return tuple(notes)


def choose(release: Release, machine: Machine) -> tuple[Choice | None, list[str]]:
    """The best build of one release for the machine, or None with the reasons."""
    choices, reasons = fits(release, machine)
    return (choices[0] if choices else None), reasons


def best_release(machine: Machine, at_least: str | None = None, at_most: Version | None = None) -> Choice | None:
    """The newest release (>= ``at_least``, a full version such as ``"2.10.0"``) with a build for the machine."""
    floor = facts.dotted(at_least) if at_least else None
    for release in reversed(facts.releases()):
        if at_most is not None and release.version > at_most:
            continue
        if floor is not None and facts.dotted(release.latest_patch) < floor:
            continue
        choice, _ = choose(release, machine)
        if choice is not None:
            return choice
    return None
