"""Choose the torch release and wheel build that fit a machine (Python, GPUs, driver) and spell the install."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from packaging.utils import canonicalize_name

from torchpatch import platform_facts as facts
from torchpatch.platform_facts import Build, Release, capability_text
from torchpatch.versions import Version

FULL, MINOR_COMPAT, DRIVER_UNKNOWN, NO_DRIVER_NEEDED = "full", "minor-compat", "driver-unknown", "cpu"


def quoted(requirement: str) -> str:
    """A requirement as one shell word in every shell: zsh (the macOS default) rejects an unquoted
    ``torchaudio==2.11.*`` ("no matches found"), and ``>=`` would redirect in any shell."""
    return "'" + requirement.replace("'", "'\\''") + "'"


def is_cuda_only_package(name: str) -> bool:
    """Whether only a CUDA build of torch brings this package (its CUDA libraries, the Triton compiler): a CPU
    build needs none of them, and pip leaves them behind when torch itself is replaced."""
    name = canonicalize_name(name)
    return name.startswith(("nvidia-", "cuda-")) or name in ("triton", "pytorch-triton")


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
    #: The driver as written (``"580.95.05"``: the tuple would print as 580.95.5).
    driver_text: str = ""

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

    @property
    def label(self) -> str:
        return f"torch {self.version} ({self.build.tag})"


def _driver_mode(build: Build, driver: tuple[int, ...] | None) -> tuple[str | None, str]:
    """(mode, reason when rejected) for a build under a driver."""
    if build.cuda is None:
        return NO_DRIVER_NEEDED, ""
    requirement = facts.driver_requirement(build.cuda)
    if driver is None or requirement is None:
        return DRIVER_UNKNOWN, ""
    toolkit, _ = requirement.toolkit_for(build.cuda_update)
    if driver >= toolkit:
        return FULL, ""
    if driver >= requirement.minor_compat_driver:
        return MINOR_COMPAT, ""
    need = requirement.minor_compat_text
    return None, f"{build.tag} needs driver >= {need}"


def undriven_gpus(machine: Machine) -> list[str]:
    """Why the machine's driver cannot run some of its GPUs at all, whatever torch is installed.

    A driver branch knows a range of GPU generations: Blackwell needs R570+, Hopper and Ada R520+, and
    R580 is the last branch for Maxwell, Pascal and Volta (platform.toml, [[gpu_generation]]).
    """
    if machine.driver is None:
        return []
    reasons = []
    for cap in machine.gpus:
        generation = facts.gpu_generation(cap)
        if generation is not None and not generation.driven_by(machine.driver):
            reasons.append(
                f"driver {machine.driver_text} cannot drive {capability_text(cap)}: {generation.name} GPUs need "
                f"driver branch {generation.branches_text}"
            )
    return reasons


def _arch_text(build: Build) -> str:
    archs = " ".join(capability_text(arch) for arch in build.archs)
    return archs + (f" +PTX {capability_text(build.ptx)}" if build.ptx else "")


def fits(release: Release, machine: Machine) -> tuple[list[Choice], list[str]]:
    """Every build of a release that fits the machine, best first, and why the others do not."""
    reasons: list[str] = []
    if machine.python and not release.supports_python(machine.python):
        return [], [f"torch {release.version} has wheels for Python {release.python_range_text} only"]
    undriven = undriven_gpus(machine)
    if undriven:
        return [], undriven
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
        _, toolkit = requirement.toolkit_for(build.cuda_update)
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
                f"(>= {requirement.toolkit_for(build.cuda_update)[1]} for the full CUDA {build.cuda} feature set)"
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


def affected_by(version: str) -> list[facts.Advisory]:
    """The advisories against torch ``version`` (``"2.5.1"``)."""
    found = []
    for advisory in facts.cves():
        try:
            if advisory.affects(version):
                found.append(advisory)
        except ValueError:
            continue
    return found


def nearest_safe_release(machine: Machine, installed: Release, companions: dict[str, str]) -> Choice | None:
    """The oldest release from ``installed`` on with a build for the machine and no known advisory: the
    smallest step out of a vulnerable version (2.5.1 → the first release every advisory is fixed in). It is
    never older than a release an installed companion was made for, so no companion is downgraded, and its
    build runs as well on the machine's driver as the newest release's (no step down to minor-version
    compatibility)."""
    newest = best_release(machine)
    if newest is None:
        return None
    floor = installed.version
    for name, version in companions.items():
        minor = ".".join(version.split("+", 1)[0].split(".")[:2])
        made_for = [row.version for row in facts.releases() if getattr(row, name, "") == minor]
        if made_for:
            floor = max(floor, min(made_for))
    for release in facts.releases():
        if release.version < floor:
            continue
        choice, _ = choose(release, machine)
        if choice is not None and not affected_by(choice.version) and _rank(choice) >= _rank(newest):
            return choice
    return newest


def best_release(machine: Machine, at_least: str | None = None, at_most: Version | None = None) -> Choice | None:
    """The newest release (>= ``at_least``, a full version such as ``"2.10.0"``) with a build for the machine,
    preferring one without a known advisory when any fits."""
    floor = facts.dotted(at_least) if at_least else None
    first_fit: Choice | None = None
    for release in reversed(facts.releases()):
        if at_most is not None and release.version > at_most:
            continue
        if floor is not None and facts.dotted(release.latest_patch) < floor:
            continue
        choice, _ = choose(release, machine)
        if choice is None:
            continue
        if not affected_by(choice.version):
            return choice
        first_fit = first_fit or choice
    return first_fit


# --- one plan per run -------------------------------------------------------------------------------

#: Companions whose release follows torch's, with the platform.toml field naming the matching release.
PLANNED_COMPANIONS = ("torchvision", "torchaudio", "torchao")


@dataclass(frozen=True)
class CompanionStep:
    """The planned release of one installed companion and the index it comes from."""

    name: str
    installed: str
    #: ``torchvision==0.28.*``; empty when no release of the companion is known to fit the planned torch.
    requirement: str
    #: None: the default index (PyPI).
    index_url: str | None
    note: str = ""

    @property
    def satisfied(self) -> bool:
        """Whether the installed version already is the planned one (its build may still be wrong)."""
        if not self.requirement:
            return False
        wanted = self.requirement.split("==", 1)[1]
        installed = self.installed.split("+", 1)[0]
        if wanted.endswith(".*"):
            prefix = wanted[:-2]
            return installed == prefix or installed.startswith(prefix + ".")
        return installed == wanted


def _home_release(name: str, minor: str) -> Release | None:
    """The torch release a companion minor release was made with (torchaudio 2.11 → torch 2.11)."""
    return next((row for row in facts.releases() if getattr(row, name) == minor), None)


def companion_step(release: Release, build: Build, name: str, installed: str) -> CompanionStep:
    """Which release of ``name`` goes with ``release``/``build``, and from which index.

    A companion is built for the builds of the torch release it came out with: torchaudio 2.11 (the
    last one, stable C ABI) has cpu, cu126, cu128 and cu130 wheels, so torch 2.13 cu132 takes it from
    cu130, which links the same CUDA 13 runtime.
    """
    minor = getattr(release, name, "")
    if not minor:
        return CompanionStep(name, installed, "", None, f"no {name} release is known to match torch {release.version}")
    requirement = f"{name}=={minor}.*"
    if name == "torchao":  # torchao's own wheels on PyPI; it skips its compiled ops on a torch it was not built for
        return CompanionStep(name, installed, requirement, None)
    home = _home_release(name, minor) or release
    if home.build(build.tag) is not None:
        return CompanionStep(name, installed, requirement, build.index_url)
    same_major = [
        other
        for other in home.builds
        if other.cuda and build.cuda and other.cuda.split(".")[0] == build.cuda.split(".")[0]
    ]
    if same_major:
        other = max(same_major, key=_cuda_key)
        return CompanionStep(
            name,
            installed,
            requirement,
            other.index_url,
            f"{name} {minor} has no {build.tag} build; its {other.tag} build links the same CUDA "
            f"{build.cuda.split('.')[0] if build.cuda else ''} runtime",
        )
    return CompanionStep(
        name, installed, "", None, f"{name} {minor} has no build for {build.tag}: uninstall it or build it from source"
    )


@dataclass(frozen=True)
class Plan:
    """What this run recommends: one torch release and build, and the matching release of every installed
    companion. Every finding's fix is this plan or a part of it."""

    choice: Choice
    companions: tuple[CompanionStep, ...]
    installed_version: str | None
    installed_tag: str | None
    #: ``--target-torch`` as given, and whether a build of it fits (if not, ``choice`` is the fallback).
    requested: str | None = None
    requested_fits: bool = True
    #: Installed CUDA-only packages (nvidia-*, triton) that a move to the CPU build leaves behind.
    cuda_leftovers: tuple[str, ...] = ()

    @property
    def torch_changes(self) -> bool:
        return self.installed_version != self.choice.version or self.installed_tag != self.choice.build.tag

    def step(self, name: str) -> CompanionStep | None:
        wanted = canonicalize_name(name)
        return next((step for step in self.companions if step.name == wanted), None)

    @property
    def notes(self) -> tuple[str, ...]:
        return (*self.choice.notes, *(step.note for step in self.companions if step.note))

    def command(self) -> str:
        """The whole plan: empty when torch and every companion are already as planned."""
        if self.torch_changes:
            return self._install(include_torch=True, names=[step.name for step in self.companions])
        return self._install(False, [step.name for step in self.companions if step.requirement and not step.satisfied])

    def torch_command(self) -> str:
        """The plan with torch installed even when it already is (a broken install is replaced)."""
        return self._install(True, [step.name for step in self.companions], force_torch=True)

    def companion_command(self, name: str, wrong_build: bool = False) -> str:
        """The part of the plan that fixes one companion; the whole plan when torch must change first.

        ``wrong_build``: the companion's version may be right but it was built for another torch build
        (CUDA runtime), so it is reinstalled from the planned index."""
        step = self.step(name)
        if self.torch_changes or step is None:
            return self.command()
        if not step.requirement:
            return f"pip uninstall -y {step.name}"
        if step.satisfied:
            if not wrong_build:
                return ""
            version = step.installed.split("+", 1)[0]
            index = f" --index-url {step.index_url}" if step.index_url else ""
            return f"pip install --force-reinstall --no-deps {quoted(f'{step.name}=={version}')}{index}"
        return self._install(False, [step.name])

    def _install(self, include_torch: bool, names: Sequence[str], force_torch: bool = False) -> str:
        groups: dict[str, list[str]] = {}
        uninstall: list[str] = []
        if include_torch:
            # pip keeps an installed 2.13.0+cpu when asked for torch==2.13.0 from another index.
            if self.installed_version is not None and (self.installed_version == self.choice.version or force_torch):
                uninstall.append("torch")
            groups.setdefault(self.choice.build.index_url, []).append(f"torch=={self.choice.version}")
        for step in self.companions:
            if step.name not in names or not step.requirement:
                continue
            # A companion already at the planned version is kept by pip even when it was built for
            # another torch build: it goes out with torch.
            if (
                include_torch
                and step.index_url
                and step.satisfied
                and (self.installed_tag != self.choice.build.tag or force_torch)
            ):
                uninstall.append(step.name)
            groups.setdefault(step.index_url or "", []).append(step.requirement)
        commands = [f"pip uninstall -y {' '.join(uninstall)}"] if uninstall else []
        for index, requirements in groups.items():
            commands.append(
                f"pip install {' '.join(map(quoted, requirements))}" + (f" --index-url {index}" if index else "")
            )
        if include_torch and self.choice.build.tag == "cpu" and self.cuda_leftovers:
            # pip replaces torch but keeps the CUDA libraries and Triton the CUDA build pulled in (GBs).
            commands.append(f"pip uninstall -y {' '.join(self.cuda_leftovers)}")
        return " && ".join(commands) if groups else ""


def make_plan(
    machine: Machine,
    installed_version: str | None,
    installed_tag: str | None,
    companions: dict[str, str],
    target: Release | None = None,
    target_patch: str | None = None,
    cuda_leftovers: Sequence[str] = (),
) -> tuple[Plan | None, list[str]]:
    """The one plan of a run, and why the requested release (or every release) does not fit.

    The release is ``target`` when given; else the installed release when a build of it fits the machine
    and its version has no known advisory; else the newest release that fits, one without an advisory
    when any fits. The build is the installed one when it fits as well as any, else the best one.
    """
    reasons: list[str] = []
    choice: Choice | None = None
    requested_fits = True
    installed_release = None
    if installed_version is not None:
        try:
            installed_release = facts.release(installed_version)
        except ValueError:
            installed_release = None
    if target is not None:
        choice, reasons = choose(target, machine)
        if choice is not None and target_patch:
            choice = Choice(choice.release, choice.build, target_patch, choice.driver_mode, choice.notes)
        if choice is None:
            requested_fits = False
    elif installed_release is not None and installed_version is not None:
        choices, reasons = fits(installed_release, machine)
        version = installed_version
        if affected_by(version) and not affected_by(installed_release.latest_patch):
            version = installed_release.latest_patch
        if choices and not affected_by(version):
            kept = next((c for c in choices if c.build.tag == installed_tag), None)
            best = choices[0]
            pick = kept if kept is not None and _rank(kept) >= _rank(best) else best
            choice = Choice(pick.release, pick.build, version, pick.driver_mode, pick.notes)
        elif affected_by(version):
            choice = nearest_safe_release(machine, installed_release, companions)
    if choice is None:
        choice = best_release(machine)
    if choice is None:
        return None, reasons
    steps = tuple(
        companion_step(choice.release, choice.build, canonicalize_name(name), version)
        for name, version in companions.items()
        if canonicalize_name(name) in PLANNED_COMPANIONS
    )
    plan = Plan(
        choice,
        steps,
        installed_version,
        installed_tag,
        requested=target_patch or (str(target.version) if target else None),
        requested_fits=requested_fits,
        cuda_leftovers=tuple(cuda_leftovers) if installed_tag not in (None, "cpu") else (),
    )
    return plan, reasons


_RANK = {FULL: 3, NO_DRIVER_NEEDED: 3, DRIVER_UNKNOWN: 2, MINOR_COMPAT: 1}


def _rank(choice: Choice) -> int:
    return _RANK[choice.driver_mode]
