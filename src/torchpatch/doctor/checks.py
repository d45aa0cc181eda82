"""Doctor's findings: each check turns an Environment into coded problems with an exact fix."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion

from torchpatch import platform_facts as facts
from torchpatch.doctor.plan import MINOR_COMPAT, Choice, Machine, best_release, choose, companion_pin
from torchpatch.doctor.probes import Environment, GPU
from torchpatch.platform_facts import Release, capability, capability_text

SEVERITIES = ("error", "warning", "info")
#: Severities that make doctor exit 1.
PROBLEM_SEVERITIES = ("error", "warning")
PINNABLE_COMPANIONS = ("torchvision", "torchaudio")

#: code → (name, what it means); the README's table is generated from this.
FINDINGS: dict[str, tuple[str, str]] = {
    "DR001": ("python-unsupported", "Python is outside the range the torch release ships wheels for"),
    "DR002": ("python-dropped-next", "the next torch release drops this Python"),
    "DR003": ("torch-missing", "torch is not installed in this interpreter"),
    "DR004": ("torch-import-fails", "torch is installed but importing it fails"),
    "DR005": ("torch-unknown-release", "the installed torch is outside the releases torchpatch knows"),
    "DR010": ("torch-cve", "the installed torch is affected by a published advisory"),
    "DR020": ("no-kernel-image", "a GPU has no compiled kernels in the installed build"),
    "DR021": ("cpu-build-with-gpu", "a CPU-only torch on a machine with an NVIDIA GPU"),
    "DR022": ("cuda-build-without-gpu", "a CUDA torch on a machine without an NVIDIA GPU or driver"),
    "DR023": ("gpu-capability-unknown", "a GPU's compute capability could not be read"),
    "DR030": ("driver-too-old", "the NVIDIA driver is older than the build's CUDA major needs"),
    "DR031": ("driver-minor-compat", "the driver runs the build only through minor-version compatibility"),
    "DR040": ("companion-mismatch", "an installed package pins a torch other than the installed one"),
    "DR041": ("torch-requirement-mismatch", "a package torch pins (e.g. triton) has another version installed"),
    "DR050": ("extension-abi-mismatch", "a compiled extension uses the other C++ string ABI than torch"),
    "DR051": (
        "extension-built-for-other-torch",
        "a compiled extension imports torch symbols the installed torch lacks",
    ),
    "DR052": ("extension-cuda-mismatch", "a compiled extension links another CUDA runtime major than torch"),
    "DR060": ("no-build-fits", "no wheel of the requested release fits this Python, GPU and driver"),
}


@dataclass
class Finding:
    code: str
    severity: str
    message: str
    fix: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return FINDINGS[self.code][0]

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, **asdict(self)}


@dataclass
class Diagnosis:
    findings: list[Finding]
    plan: Choice | None
    plan_release: Release | None
    plan_reasons: list[str]
    companions: list[str]
    plan_command: str = ""

    @property
    def has_problems(self) -> bool:
        return any(finding.severity in PROBLEM_SEVERITIES for finding in self.findings)


@dataclass
class Context:
    """One doctor run: the environment, the release under examination and the machine it must fit."""

    env: Environment
    installed: Release | None
    target: Release | None
    target_patch: str | None
    machine: Machine
    companions: list[str]

    @property
    def release(self) -> Release | None:
        return self.target or self.installed

    def command(self, choice: Choice) -> str:
        torch = self.env.torch
        same = torch is not None and torch.public_version == choice.version
        return choice.command(self.companions, replace_same_version=same)

    def best_fix(self, at_least: str | None = None, release: Release | None = None) -> tuple[str, list[str]]:
        """The install command for this machine: in ``release`` if given and it fits, else the newest that does."""
        if release is not None:
            choice, reasons = choose(release, self.machine)
            if choice is not None:
                return self.command(self._pinned(choice)), list(choice.notes)
        choice = best_release(self.machine, at_least=at_least)
        if choice is None:
            return "", ["no release torchpatch knows has a wheel for this machine"]
        if self.is_installed(choice):
            return "", [f"the installed {choice.label} is already the newest release that fits this machine"]
        return self.command(choice), list(choice.notes)

    def is_installed(self, choice: Choice) -> bool:
        torch = self.env.torch
        if torch is None or torch.public_version != choice.version:
            return False
        tag = "cpu" if torch.build == "cpu" else _tag_of(torch.cuda) if torch.build == "cuda" and torch.cuda else ""
        return tag == choice.build.tag

    def _pinned(self, choice: Choice) -> Choice:
        if self.target is not None and choice.release is self.target and self.target_patch:
            return Choice(choice.release, choice.build, self.target_patch, choice.driver_mode, choice.notes)
        return choice


def machine_of(env: Environment) -> Machine:
    driver = None
    if env.driver:
        try:
            driver = facts.dotted(env.driver)
        except ValueError:
            driver = None
    glibc = None
    if env.platform.get("glibc"):
        try:
            glibc = facts.dotted(env.platform["glibc"])
        except ValueError:
            glibc = None
    return Machine(
        python=env.python[:2] if env.python else None,  # type: ignore[arg-type]
        gpus=tuple(gpu.capability for gpu in env.gpus if gpu.capability is not None),
        driver=driver,
        nvidia=bool(env.gpus) or driver is not None,
        glibc=glibc,
    )


def _gpu_text(gpu: GPU) -> str:
    cap = f", {capability_text(gpu.capability)}" if gpu.capability else ""
    return f"GPU {gpu.index} ({gpu.name}{cap})"


def _release_of(version: str) -> Release | None:
    try:
        return facts.release(version)
    except ValueError:
        return None


# --- the checks -------------------------------------------------------------------------------------


def check_torch_present(ctx: Context) -> list[Finding]:
    torch = ctx.env.torch
    if ctx.env.planning:
        return []
    if torch is None:
        fix, notes = ctx.best_fix(release=ctx.target)
        return [Finding("DR003", "warning", f"torch is not installed for Python {ctx.env.python_text}", fix, notes)]
    findings = []
    if not torch.importable:
        release = ctx.installed
        build = _installed_build(ctx)
        if release is not None and build is not None:
            fix = f"pip uninstall -y torch && pip install torch=={torch.public_version} --index-url {build.index_url}"
        else:
            fix = f"pip install --force-reinstall torch=={torch.public_version}"
        findings.append(
            Finding(
                "DR004",
                "error",
                f"torch {torch.version} is installed but `import torch` fails: {torch.import_error or 'unknown error'}. "
                "An undefined symbol or a missing .so usually means a half-upgraded install or NVIDIA libraries "
                "from another CUDA; facts below come from the package metadata",
                fix,
            )
        )
    if ctx.installed is None:
        known = f"{facts.releases()[0].version}–{facts.releases()[-1].version}"
        findings.append(
            Finding(
                "DR005",
                "info",
                f"torch {torch.version} is outside the releases torchpatch knows ({known}); "
                "its Python, GPU and driver support were not checked",
            )
        )
    return findings


def check_python(ctx: Context) -> list[Finding]:
    release, python = ctx.release, ctx.machine.python
    if release is None or python is None:
        return []
    findings = []
    if not release.supports_python(python):
        what = "the target" if ctx.target is not None else "the installed"
        fix, notes = ctx.best_fix()
        if fix:
            notes = [f"or keep torch {release.version} and use Python {release.python_range_text}", *notes]
        else:
            notes = [f"use Python {release.python_range_text} for torch {release.version}", *notes]
        findings.append(
            Finding(
                "DR001",
                "error",
                f"Python {ctx.machine.python_text} is outside {what} torch {release.version}'s range "
                f"{release.python_range_text}: pip has no torch {release.version} wheel for it",
                fix,
                notes,
            )
        )
        return findings
    following = [row for row in facts.releases() if row.version > release.version]
    if following and not following[0].supports_python(python) and python < following[0].python_min:
        nxt = following[0]
        findings.append(
            Finding(
                "DR002",
                "info",
                f"torch {nxt.version} drops Python {ctx.machine.python_text} (it needs {nxt.python_range_text}); "
                f"upgrading past torch {release.version} needs a newer Python",
            )
        )
    return findings


def check_advisories(ctx: Context) -> list[Finding]:
    torch = ctx.env.torch
    if torch is None or ctx.env.planning:
        return []
    findings = []
    for advisory in facts.cves():
        try:
            affected = advisory.affects(torch.version)
        except ValueError:
            continue
        if not affected:
            continue
        fix, notes = ctx.best_fix(at_least=advisory.fixed)
        alias = f" / {advisory.alias}" if advisory.alias else ""
        message = (
            f"torch {torch.version} is affected by {advisory.id}{alias} (fixed in {advisory.fixed}): {advisory.summary}"
        )
        if not fix:
            message += f"; no torch >= {advisory.fixed} has a wheel for this machine, so only avoid loading untrusted checkpoints"
        findings.append(Finding("DR010", advisory.severity, message, fix, [*notes, f"source: {advisory.source}"]))
    return findings


def _installed_build(ctx: Context) -> facts.Build | None:
    torch = ctx.env.torch
    if torch is None or ctx.installed is None:
        return None
    if torch.build == "cpu":
        return ctx.installed.build("cpu")
    if torch.build == "cuda" and torch.cuda:
        major, minor = torch.cuda.split(".")[:2]
        return ctx.installed.build(f"cu{major}{minor}")
    return None


def installed_arches(ctx: Context) -> tuple[tuple[tuple[int, int], ...], tuple[int, int] | None, str]:
    """(cubin archs, newest PTX arch, where they came from) of the installed CUDA build."""
    torch = ctx.env.torch
    assert torch is not None
    if torch.arch_list:
        cubins, ptx = [], None
        for flag in torch.arch_list:
            try:
                cap = capability(flag)
            except ValueError:
                continue
            if flag.startswith("compute_"):
                ptx = max(ptx, cap) if ptx else cap
            else:
                cubins.append(cap)
        return tuple(cubins), ptx, "torch._C._cuda_getArchFlags()"
    build = _installed_build(ctx)
    if build is None:
        return (), None, ""
    return (
        build.archs,
        build.ptx,
        f"the data table ({build.tag} of torch {ctx.installed.version if ctx.installed else '?'})",
    )


def check_gpus(ctx: Context) -> list[Finding]:
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning:
        return []
    findings = []
    unknown = [gpu for gpu in env.gpus if gpu.capability is None]
    for gpu in unknown:
        findings.append(
            Finding(
                "DR023",
                "info",
                f"{_gpu_text(gpu)}: its compute capability could not be read (nvidia-smi without compute_cap), "
                "so kernel coverage was not checked",
                "",
                ["plan for it with `torchpatch doctor --gpu sm_XY --driver <version>`"],
            )
        )
    if torch.build == "cpu" and env.gpus:
        fix, notes = ctx.best_fix(release=ctx.target or ctx.installed)
        findings.append(
            Finding(
                "DR021",
                "warning",
                f"torch {torch.version} is a CPU-only build but this machine has "
                f"{', '.join(_gpu_text(gpu) for gpu in env.gpus)}: torch.cuda.is_available() is False",
                fix,
                notes,
            )
        )
    if torch.build == "cuda" and not env.gpus and not env.driver:
        cpu = ctx.installed.build("cpu") if ctx.installed else None
        fix = ""
        if cpu is not None:
            fix = f"pip uninstall -y torch && pip install torch=={torch.public_version} --index-url {cpu.index_url}"
        findings.append(
            Finding(
                "DR022",
                "info",
                f"torch {torch.version} is a CUDA {torch.cuda} build but no NVIDIA GPU or driver was found "
                "(no nvidia-smi, no /proc/driver/nvidia/version); a CPU build is several GB smaller",
                fix,
            )
        )
    if torch.build != "cuda":
        return findings
    cubins, ptx, origin = installed_arches(ctx)
    if not cubins and ptx is None:
        return findings
    archs = " ".join(capability_text(cap) for cap in cubins) + (f" +PTX {capability_text(ptx)}" if ptx else "")
    for gpu in env.gpus:
        if gpu.capability is None:
            continue
        cap = gpu.capability
        has_cubin = any(arch[0] == cap[0] and arch[1] <= cap[1] for arch in cubins)
        if has_cubin or (ptx is not None and cap >= ptx):
            continue
        fix, notes = ctx.best_fix(release=ctx.target or ctx.installed)
        findings.append(
            Finding(
                "DR020",
                "error",
                f"{_gpu_text(gpu)} has no kernels in torch {torch.version} (built for {archs}, per {origin}): "
                "CUDA ops fail with 'no kernel image is available for execution on the device'",
                fix,
                notes,
            )
        )
    return findings


def check_driver(ctx: Context) -> list[Finding]:
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning or torch.build != "cuda" or not torch.cuda or ctx.machine.driver is None:
        return []
    requirement = facts.driver_requirement(torch.cuda)
    if requirement is None:
        return []
    driver = ctx.machine.driver
    toolkit = requirement.toolkit_text
    minimum = requirement.minor_compat_text
    source = f"source: {requirement.source} ({requirement.note})"
    if driver < requirement.minor_compat_driver:
        fix, notes = ctx.best_fix(release=ctx.target or ctx.installed)
        return [
            Finding(
                "DR030",
                "error",
                f"NVIDIA driver {env.driver} is too old for torch {torch.version} (CUDA {torch.cuda}): it needs "
                f">= {minimum} (>= {toolkit} for the full feature set); CUDA initialisation fails with "
                "'The NVIDIA driver on your system is too old'",
                fix,
                [*notes, f"or upgrade the NVIDIA driver to >= {toolkit}", source],
            )
        ]
    if driver < requirement.toolkit_driver:
        cubins, ptx, _ = installed_arches(ctx)
        ptx_only = [
            gpu
            for gpu in env.gpus
            if gpu.capability and not any(a[0] == gpu.capability[0] and a[1] <= gpu.capability[1] for a in cubins)
        ]
        severity = "warning" if ptx_only else "info"
        fix = ""
        notes = [source]
        choice, _ = choose(ctx.target or ctx.installed, ctx.machine) if (ctx.target or ctx.installed) else (None, [])
        if choice is not None and choice.driver_mode != MINOR_COMPAT and choice.build.tag != _tag_of(torch.cuda):
            fix = ctx.command(choice)
        elif ptx_only:
            fix = f"upgrade the NVIDIA driver to >= {toolkit}"
        detail = (
            f"; {', '.join(_gpu_text(gpu) for gpu in ptx_only)} relies on PTX JIT, which needs the full driver"
            if ptx_only
            else "; every GPU has compiled kernels, so this works without PTX JIT"
        )
        return [
            Finding(
                "DR031",
                severity,
                f"NVIDIA driver {env.driver} runs torch {torch.version} (CUDA {torch.cuda}) only through minor-version "
                f"compatibility (full support needs >= {toolkit}){detail}",
                fix,
                notes if fix.startswith("upgrade") else [f"or upgrade the NVIDIA driver to >= {toolkit}", *notes],
            )
        ]
    return []


def _tag_of(cuda: str) -> str:
    major, minor = cuda.split(".")[:2]
    return f"cu{major}{minor}"


def _requirement_on(requires: tuple[str, ...], name: str, env: Environment) -> Requirement | None:
    markers = env.marker_environment()
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != canonicalize_name(name):
            continue
        if requirement.marker is not None and not requirement.marker.evaluate(markers):
            continue
        return requirement
    return None


def _satisfied(requirement: Requirement, version: str) -> bool:
    try:
        return requirement.specifier.contains(version, prereleases=True)
    except InvalidVersion:
        return True


def check_packages(ctx: Context) -> list[Finding]:
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning:
        return []
    findings = []
    build = _installed_build(ctx)
    for package in env.packages:
        if canonicalize_name(package.name) == "torch":
            continue
        requirement = _requirement_on(package.requires, "torch", env)
        if requirement is None or not str(requirement.specifier) or _satisfied(requirement, torch.version):
            continue
        name = canonicalize_name(package.name)
        fix = ""
        notes: list[str] = []
        if name in PINNABLE_COMPANIONS and ctx.installed is not None:
            pin = companion_pin(ctx.installed, name)
            index = f" --index-url {build.index_url}" if build is not None else ""
            if pin:
                fix = f"pip install {pin}{index}"
            else:
                fix = f"pip uninstall -y {name}"
                notes.append(f"PyPI lists no {name} release for torch {ctx.installed.version} (checked 2026-11-30)")
        else:
            fix = (
                f'echo "torch=={torch.version}" > torch-constraint.txt && '
                f"pip install --upgrade {package.name} -c torch-constraint.txt"
            )
            notes.append(
                f"pip picks the newest {package.name} whose pin accepts the installed torch, or reports that none does"
            )
        findings.append(
            Finding(
                "DR040",
                "error",
                f"{package.name} {package.version} requires torch{requirement.specifier} but torch {torch.version} "
                "is installed: its compiled ops fail to load or misbehave",
                fix,
                notes,
            )
        )
    torch_package = env.package("torch")
    if torch_package is not None:
        for text in torch_package.requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            installed = env.package(requirement.name)
            if installed is None or not str(requirement.specifier):
                continue
            if requirement.marker is not None and not requirement.marker.evaluate(env.marker_environment()):
                continue
            if _satisfied(requirement, installed.version):
                continue
            findings.append(
                Finding(
                    "DR041",
                    "error",
                    f"torch {torch.version} requires {requirement.name}{requirement.specifier} but "
                    f"{installed.name} {installed.version} is installed (torch.compile's kernels come from it)",
                    f'pip install "{requirement.name}{requirement.specifier}"',
                )
            )
    return findings


# Before the CXX11 ABI, std::string mangles as the substitution `Ss` (e.g. `RKSs` = const std::string&);
# with _GLIBCXX_USE_CXX11_ABI=1 it is `NSt7__cxx1112basic_string...`.
_OLD_ABI_STRING = re.compile(r"(?:RK|PK|R|P|I|K)Ss")


def extension_abi(symbols: tuple[str, ...]) -> str | None:
    """ "cxx11" or "pre-cxx11" from how imported torch symbols mangle std::string; None if none take one."""
    new = any("__cxx11" in name for name in symbols)
    old = any(_OLD_ABI_STRING.search(name) for name in symbols)
    if new and not old:
        return "cxx11"
    if old and not new:
        return "pre-cxx11"
    return None


def check_extensions(ctx: Context) -> list[Finding]:
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning:
        return []
    torch_abi = torch.cxx11_abi
    if torch_abi is None and ctx.installed is not None:
        build = _installed_build(ctx)
        torch_abi = build.cxx11_abi if build is not None else ctx.installed.cxx11_abi
    findings = []
    reported: set[str] = set()
    for extension in env.extensions:
        key = canonicalize_name(extension.distribution)
        if key in reported:
            continue
        rebuild = (
            f"pip install --force-reinstall --no-deps --no-build-isolation --no-binary {extension.distribution} "
            f"{extension.distribution}=={extension.distribution_version}"
        )
        abi = extension_abi(extension.torch_symbols)
        wanted = None if torch_abi is None else ("cxx11" if torch_abi else "pre-cxx11")
        if abi is not None and wanted is not None and abi != wanted:
            reported.add(key)
            findings.append(
                Finding(
                    "DR050",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) was built with the "
                    f"{abi} C++ ABI but torch {torch.version} uses the {wanted} ABI (PyPI wheels switched to "
                    "_GLIBCXX_USE_CXX11_ABI=1 in 2.7): importing it fails with 'undefined symbol'",
                    rebuild,
                    [
                        "rebuilds it from source against the installed torch; a prebuilt wheel must match the ABI "
                        "(flash-attn names it cxx11abiTRUE/FALSE)"
                    ],
                )
            )
            continue
        torch_cuda_major = torch.cuda.split(".")[0] if torch.build == "cuda" and torch.cuda else None
        if extension.cuda_runtime and extension.cuda_runtime != torch_cuda_major and torch.build in ("cuda", "cpu"):
            reported.add(key)
            build = _installed_build(ctx)
            what = f"CUDA {torch.cuda}" if torch_cuda_major else "CPU-only"
            if key in PINNABLE_COMPANIONS and build is not None:
                fix = (
                    f"pip install --force-reinstall --no-deps {extension.distribution}=={extension.distribution_version} "
                    f"--index-url {build.index_url}"
                )
            else:
                fix = rebuild
            findings.append(
                Finding(
                    "DR052",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) links the CUDA "
                    f"{extension.cuda_runtime} runtime (libcudart.so.{extension.cuda_runtime}) but torch {torch.version} "
                    f"is a {what} build: its compiled ops do not load (torchvision 0.28.0 from PyPI on torch 2.13.0+cpu: "
                    "`import torchvision` raises 'operator torchvision::nms does not exist')",
                    fix,
                )
            )
            continue
        if extension.missing_symbols:
            reported.add(key)
            sample = extension.missing_symbols[0]
            # Stable-ABI extensions (torch/csrc/stable, 2.9+) import C functions that only grow: a missing
            # one means the extension needs a newer torch rather than a rebuild.
            stable_only = not any(name.startswith("_Z") for name in extension.missing_symbols)
            why = (
                "it needs a newer torch (stable C ABI functions)"
                if stable_only
                else "it was built against another torch"
            )
            findings.append(
                Finding(
                    "DR051",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) imports "
                    f"{len(extension.missing_symbols)} torch symbol(s) that torch {torch.version} does not export "
                    f"(e.g. {sample}): {why}",
                    rebuild,
                )
            )
    return findings


def check_plan(ctx: Context) -> tuple[list[Finding], Choice | None, list[str]]:
    """In planning mode or with --target-torch: what to install, or DR060 when nothing fits."""
    if not ctx.env.planning and ctx.target is None:
        return [], None, []
    if ctx.target is not None:
        choice, reasons = choose(ctx.target, ctx.machine)
        if choice is not None:
            return [], ctx._pinned(choice), reasons
        fallback = best_release(ctx.machine)
        fix = ctx.command(fallback) if fallback else ""
        notes = list(fallback.notes) if fallback else []
        if fallback is not None:
            notes.insert(0, f"newest release that fits: {fallback.label}")
        return (
            [
                Finding(
                    "DR060",
                    "error",
                    f"no torch {ctx.target.version} wheel fits {_machine_text(ctx.machine)}: " + "; ".join(reasons),
                    fix,
                    notes,
                )
            ],
            None,
            reasons,
        )
    choice = best_release(ctx.machine)
    if choice is None:
        return (
            [
                Finding(
                    "DR060", "error", f"no torch release torchpatch knows has a wheel for {_machine_text(ctx.machine)}"
                )
            ],
            None,
            [],
        )
    return [], choice, []


def _machine_text(machine: Machine) -> str:
    gpus = ", ".join(capability_text(cap) for cap in machine.gpus) or "no GPU"
    driver = f"driver {'.'.join(map(str, machine.driver))}" if machine.driver else "any driver"
    python = f"Python {machine.python_text}" if machine.python else "any Python"
    return f"{python}, {gpus}, {driver}"


CHECKS: tuple[Callable[[Context], list[Finding]], ...] = (
    check_torch_present,
    check_python,
    check_advisories,
    check_gpus,
    check_driver,
    check_packages,
    check_extensions,
)


def diagnose(env: Environment, target: str | None = None) -> Diagnosis:
    """Run every check; ``target`` is a release such as ``"2.11"`` or ``"2.11.0"``."""
    installed = _release_of(env.torch.version) if env.torch else None
    target_release = facts.release(target) if target else None
    target_patch = target if target and target.count(".") >= 2 else None
    companions = [name for name in PINNABLE_COMPANIONS if env.package(name) is not None]
    ctx = Context(env, installed, target_release, target_patch, machine_of(env), companions)
    findings: list[Finding] = []
    for check in CHECKS:
        findings.extend(check(ctx))
    plan_findings, plan, reasons = check_plan(ctx)
    findings.extend(plan_findings)
    order = {severity: rank for rank, severity in enumerate(SEVERITIES)}
    findings.sort(key=lambda finding: (order[finding.severity], finding.code))
    plan_command = ctx.command(plan) if plan is not None and not ctx.is_installed(plan) else ""
    return Diagnosis(
        findings, plan, target_release or (plan.release if plan else None), reasons, companions, plan_command
    )
