"""Doctor's findings: each check turns an Environment into coded problems with an exact fix."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion

from torchpatch import platform_facts as facts
from torchpatch.doctor.plan import (
    MINOR_COMPAT,
    PLANNED_COMPANIONS,
    Machine,
    Plan,
    is_cuda_only_package,
    make_plan,
    quoted,
    undriven_gpus,
)
from torchpatch.doctor.probes import GPU, Environment, Extension, Package, TorchInstall
from torchpatch.platform_facts import Release, capability, capability_text

SEVERITIES = ("error", "warning", "info")
#: Severities that make doctor exit 1.
PROBLEM_SEVERITIES = ("error", "warning")
PINNABLE_COMPANIONS = ("torchvision", "torchaudio")

#: code → (name, what it means); docs/doctor.md's table must match it (tests/doctor/test_doctor.py).
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
    "DR024": ("torch-cuda-warning", "torch itself warned about the GPU, driver or CUDA when it initialised"),
    "DR025": ("cuda-packages-on-cpu-build", "CUDA libraries or Triton left installed beside a CPU-only torch"),
    "DR030": ("driver-too-old", "the NVIDIA driver is older than the build's CUDA major needs"),
    "DR031": ("driver-minor-compat", "the driver runs the build only through minor-version compatibility"),
    "DR040": ("companion-mismatch", "an installed package pins a torch other than the installed one"),
    "DR041": (
        "torch-requirement-mismatch",
        "a package torch pins (triton, nvidia-*, cuda-toolkit) has another version installed",
    ),
    "DR042": ("companion-import-fails", "a companion's import fails, or it was not made for the installed torch"),
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
    #: The package the finding is about, for the companion and extension checks (one finding per package).
    subject: str = ""

    @property
    def name(self) -> str:
        return FINDINGS[self.code][0]

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, **asdict(self)}


@dataclass
class Diagnosis:
    findings: list[Finding]
    plan: Plan | None
    plan_release: Release | None
    plan_reasons: list[str]
    companions: list[str]
    plan_command: str = ""

    @property
    def has_problems(self) -> bool:
        return any(finding.severity in PROBLEM_SEVERITIES for finding in self.findings)


@dataclass
class Context:
    """One doctor run: the environment, the release under examination, the machine it must fit and the
    one plan every finding's fix comes from."""

    env: Environment
    installed: Release | None
    target: Release | None
    target_patch: str | None
    machine: Machine
    companions: list[str]
    plan: Plan | None = None
    plan_reasons: list[str] = field(default_factory=list)

    @property
    def release(self) -> Release | None:
        return self.target or self.installed

    def plan_fix(self) -> tuple[str, list[str]]:
        """The whole plan as a command, and its notes."""
        if self.plan is None:
            return "", [self.no_plan_note()]
        command = self.plan.command()
        if not command:
            return "", [f"the installed {self.plan.choice.label} is already the newest release that fits this machine"]
        return command, list(self.plan.notes)

    def no_plan_note(self) -> str:
        torch = self.env.torch
        if torch is not None and torch.build not in ("cpu", "cuda"):
            return f"torchpatch's facts cover the CPU and CUDA wheels; the installed {torch.build} build is kept"
        wanted = {
            f"{generation.name}: {generation.branches_text}"
            for cap in self.machine.gpus
            if (generation := facts.gpu_generation(cap)) is not None
            and self.machine.driver is not None
            and not generation.driven_by(self.machine.driver)
        }
        if wanted:
            return f"install an NVIDIA driver of a branch that drives the GPUs first ({'; '.join(sorted(wanted))})"
        return "no release torchpatch knows has a wheel for this machine"

    def after_plan(self, command: str) -> str:
        """``command`` run after the plan's torch change, when the plan changes torch."""
        if self.plan is not None and self.plan.torch_changes and self.plan.command():
            return f"{self.plan.command()} && {command}"
        return command


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
        driver_text=env.driver or "",
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
        fix, notes = ctx.plan_fix()
        return [Finding("DR003", "warning", f"torch is not installed for Python {ctx.env.python_text}", fix, notes)]
    findings = []
    if not torch.importable:
        if ctx.plan is not None:
            fix = ctx.plan.command() if ctx.plan.torch_changes else ctx.plan.torch_command()
        else:
            fix = f"pip install --force-reinstall {quoted(f'torch=={torch.public_version}')}"
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
        fix, notes = ctx.plan_fix()
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
        alias = f" / {advisory.alias}" if advisory.alias else ""
        message = (
            f"torch {torch.version} is affected by {advisory.id}{alias} (fixed in {advisory.fixed}): {advisory.summary}"
        )
        plan = ctx.plan
        if plan is not None and not advisory.affects(plan.choice.version):
            fix, notes = ctx.plan_fix()
        elif plan is not None and ctx.target is not None and plan.requested_fits:
            fix, notes = "", []
            message += (
                f"; the target torch {plan.choice.version} is affected too: a --target-torch >= {advisory.fixed} "
                "removes it"
            )
        else:
            fix, notes = "", []
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
        fix, notes = ctx.plan_fix()
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
        fix, _ = ctx.plan_fix()
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
        fix, notes = ctx.plan_fix()
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


_CUDA_WARNING = re.compile(r"CUDA|GPU|driver|capabilit", re.IGNORECASE)
#: Findings that explain a CUDA warning of torch's (no kernels, wrong build, old driver).
EXPLAINS_CUDA_WARNINGS = frozenset({"DR020", "DR021", "DR022", "DR030", "DR031"})


def check_torch_warnings(ctx: Context) -> list[Finding]:
    """DR024: what torch's own import and CUDA initialisation warned (the probe records them), when no
    other finding explains it."""
    torch = ctx.env.torch
    if torch is None or ctx.env.planning:
        return []
    findings = []
    for warning in torch.probe_warnings:
        if not _CUDA_WARNING.search(warning):
            continue
        fix, notes = ctx.plan_fix() if ctx.plan is not None and ctx.plan.torch_changes else ("", [])
        first, *rest = [line.strip() for line in warning.strip().splitlines() if line.strip()] or [warning]
        findings.append(Finding("DR024", "warning", f"torch warned: {first}", fix, [*rest, *notes]))
    return findings


def check_driver(ctx: Context) -> list[Finding]:
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning or torch.build != "cuda" or not torch.cuda or ctx.machine.driver is None:
        return []
    requirement = facts.driver_requirement(torch.cuda)
    if requirement is None:
        return []
    driver = ctx.machine.driver
    build = _installed_build(ctx)
    toolkit_driver, toolkit = requirement.toolkit_for(build.cuda_update if build else "")
    minimum = requirement.minor_compat_text
    source = f"source: {requirement.source} ({requirement.note})"
    if driver < requirement.minor_compat_driver:
        fix, notes = ctx.plan_fix()
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
    if driver < toolkit_driver:
        cubins, _, _ = installed_arches(ctx)
        ptx_only = [
            gpu
            for gpu in env.gpus
            if gpu.capability and not any(a[0] == gpu.capability[0] and a[1] <= gpu.capability[1] for a in cubins)
        ]
        severity = "warning" if ptx_only else "info"
        fix = ""
        notes = [source]
        plan = ctx.plan
        if plan is not None and plan.choice.driver_mode != MINOR_COMPAT and plan.torch_changes:
            fix = plan.command()
        elif ptx_only:
            fix = f"upgrade the NVIDIA driver to >= {toolkit}"
            notes = [*undriven_gpus(ctx.machine), *notes]
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
    plan = ctx.plan
    for package in env.packages:
        if canonicalize_name(package.name) == "torch":
            continue
        requirement = _requirement_on(package.requires, "torch", env)
        if requirement is None or not str(requirement.specifier) or _satisfied(requirement, torch.version):
            continue
        name = canonicalize_name(package.name)
        fix = ""
        notes: list[str] = []
        step = plan.step(name) if plan is not None else None
        if step is not None:
            fix = plan.companion_command(name) if plan is not None else ""
            if step.note:
                notes.append(step.note)
        else:
            version = plan.choice.version if plan is not None else torch.public_version
            fix = ctx.after_plan(
                f'echo "torch=={version}" > torch-constraint.txt && '
                f"pip install --upgrade {package.name} -c torch-constraint.txt"
            )
            notes.append(
                f"pip picks the newest {package.name} whose pin accepts torch {version}, or reports that none does"
            )
        findings.append(
            Finding(
                "DR040",
                "error",
                f"{package.name} {package.version} requires torch{requirement.specifier} but torch {torch.version} "
                "is installed: its compiled ops fail to load or misbehave",
                fix,
                notes,
                subject=name,
            )
        )
    findings.extend(_companion_imports(ctx))
    findings.extend(_torch_pins(ctx))
    return findings


def _companion_imports(ctx: Context) -> list[Finding]:
    """DR042: a companion whose import fails under the installed torch (seen by the probe), or that the
    matrix says was not made for it when the companion declares no torch range (torchao)."""
    torch, env = ctx.env.torch, ctx.env
    assert torch is not None
    findings = []
    installed = ctx.installed
    for package in env.packages:
        name = canonicalize_name(package.name)
        error = env.import_errors.get(name)
        if error is None and name in PLANNED_COMPANIONS and installed is not None:
            declared = _requirement_on(package.requires, "torch", env)
            if declared is not None and str(declared.specifier):
                continue  # DR040 judges declared ranges
            made_for = _matrix_releases(name, package.version)
            if not made_for or installed in made_for:
                continue
            span = (
                f"torch {made_for[0].version}"
                if len(made_for) == 1
                else f"torch {made_for[0].version}–{made_for[-1].version}"
            )
            message = (
                f"{package.name} {package.version} declares no torch range, and platform.toml's matrix pairs it with "
                f"{span}, not the installed torch {torch.version}: its import fails or its compiled ops are skipped"
            )
        elif error is not None:
            message = f"`import {name.replace('-', '_')}` fails under torch {torch.version}: {error}"
        else:
            continue
        fix = ctx.plan.companion_command(name) if ctx.plan is not None and ctx.plan.step(name) else ""
        findings.append(Finding("DR042", "error", message, fix, subject=name))
    return findings


def _matrix_releases(name: str, version: str) -> list[Release]:
    """The torch releases platform.toml pairs with a companion version (torchao 0.18.0 → 2.11 … 2.15)."""
    minor = ".".join(version.split("+", 1)[0].split(".")[:2])
    return [row for row in facts.releases() if getattr(row, name, "") == minor]


def _torch_pins(ctx: Context) -> list[Finding]:
    """DR041: what `pip check` says about torch's own pins (triton, nvidia-*, cuda-toolkit) and, one level
    down, the pins of those packages (cuda-toolkit[cudart] → nvidia-cuda-runtime)."""
    env = ctx.env
    torch_package = env.package("torch")
    if torch_package is None or env.torch is None:
        return []
    findings = []
    queue = [(torch_package, frozenset([""]))]
    seen: set[str] = set()
    while queue:
        owner, extras = queue.pop(0)
        key = canonicalize_name(owner.name)
        if key in seen:
            continue
        seen.add(key)
        for text in owner.requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is not None and not any(
                requirement.marker.evaluate({**env.marker_environment(), "extra": extra}) for extra in extras
            ):
                continue
            installed = env.package(requirement.name)
            if installed is None:
                continue
            if owner is torch_package:
                queue.append((installed, frozenset({"", *requirement.extras})))
            if not str(requirement.specifier) or _satisfied(requirement, installed.version):
                continue
            if owner is not torch_package:
                what = f"torch pins {owner.name}, which pins it"
            elif "triton" in canonicalize_name(requirement.name):
                what = "torch.compile's kernels come from it"
            else:
                what = "torch loads it"
            plan = ctx.plan
            fix = (
                plan.command()
                if plan is not None and plan.torch_changes and plan.command()
                else f"pip install {quoted(f'{requirement.name}{requirement.specifier}')}"
            )
            findings.append(
                Finding(
                    "DR041",
                    "error",
                    f"{owner.name} {owner.version} requires {requirement.name}{requirement.specifier} but "
                    f"{installed.name} {installed.version} is installed ({what})",
                    fix,
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


def rebuild_command(package: Package | None, name: str, version: str) -> tuple[str, list[str]]:
    """How to rebuild a compiled extension against the installed torch, by the way it was installed."""
    install = package.install if package is not None else {}
    kind = install.get("kind", "")
    where = install.get("path") or install.get("url") or ""
    where_word = shlex.quote(where) if where else ""
    if kind == "editable" and where:
        return (
            f"pip install --no-build-isolation --no-deps -e {where_word}",
            [f"{name} is an editable install of {where}: this rebuilds its extensions in place"],
        )
    if kind == "local" and where:
        return f"pip install --force-reinstall --no-build-isolation --no-deps {where_word}", [
            f"rebuilds {name} from {where}"
        ]
    if kind == "vcs" and where:
        commit = install.get("commit", "")
        target = f"{install.get('vcs', 'git')}+{where}" + (f"@{commit}" if commit else "")
        return (
            f"pip install --force-reinstall --no-build-isolation --no-deps {shlex.quote(target)}",
            [f"rebuilds {name} from the same commit"],
        )
    if kind == "archive" and where and not where.endswith(".whl"):
        return f"pip install --force-reinstall --no-build-isolation --no-deps {where_word}", [
            f"rebuilds {name} from {where}"
        ]
    if kind == "index":
        return (
            f"pip install --force-reinstall --no-deps --no-build-isolation --no-binary {name} {quoted(f'{name}=={version}')}",
            [
                (
                    f"builds {name} {version} from its sdist on your index against the installed torch; a prebuilt "
                    "wheel must match torch's version, CUDA and C++ ABI (flash-attn names it cxx11abiTRUE/FALSE)"
                )
            ],
        )
    how = {"archive": f"from the wheel {where}", "unknown": "without pip's records (no RECORD or direct_url.json)"}.get(
        kind, f"by {install.get('installer') or 'an unknown installer'}"
    )
    return "", [
        f"{name} {version} was installed {how}: torchpatch cannot know how to rebuild it; rebuild it the way it was built, against the installed torch"
    ]


def _extension_fix(ctx: Context, extension: Extension, wrong_build: bool) -> tuple[str, list[str]]:
    """A planned companion comes from the plan; any other extension is rebuilt (after the plan's torch)."""
    key = canonicalize_name(extension.distribution)
    plan = ctx.plan
    step = plan.step(key) if plan is not None else None
    if plan is not None and step is not None:
        return plan.companion_command(key, wrong_build=wrong_build), [step.note] if step.note else []
    package = ctx.env.package(extension.distribution)
    command, notes = rebuild_command(package, extension.distribution, extension.distribution_version)
    return (ctx.after_plan(command) if command else ""), notes


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

        abi = extension_abi(extension.torch_symbols)
        wanted = None if torch_abi is None else ("cxx11" if torch_abi else "pre-cxx11")
        if abi is not None and wanted is not None and abi != wanted:
            reported.add(key)
            fix, notes = _extension_fix(ctx, extension, wrong_build=True)
            findings.append(
                Finding(
                    "DR050",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) was built with the "
                    f"{abi} C++ ABI but torch {torch.version} uses the {wanted} ABI (PyPI wheels switched to "
                    "_GLIBCXX_USE_CXX11_ABI=1 in 2.7): importing it fails with 'undefined symbol'",
                    fix,
                    notes,
                    subject=key,
                )
            )
            continue
        torch_cuda_major = torch.cuda.split(".")[0] if torch.build == "cuda" and torch.cuda else None
        if extension.cuda_runtime and extension.cuda_runtime != torch_cuda_major and torch.build in ("cuda", "cpu"):
            reported.add(key)
            what = f"CUDA {torch.cuda}" if torch_cuda_major else "CPU-only"
            fix, notes = _extension_fix(ctx, extension, wrong_build=True)
            findings.append(
                Finding(
                    "DR052",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) links the CUDA "
                    f"{extension.cuda_runtime} runtime (libcudart.so.{extension.cuda_runtime}) but torch {torch.version} "
                    f"is a {what} build: its compiled ops do not load (torchvision 0.28.0 from PyPI on torch 2.13.0+cpu: "
                    "`import torchvision` raises 'operator torchvision::nms does not exist')",
                    fix,
                    notes,
                    subject=key,
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
            fix, notes = _extension_fix(ctx, extension, wrong_build=False)
            findings.append(
                Finding(
                    "DR051",
                    "error",
                    f"{extension.distribution} {extension.distribution_version} ({extension.path}) imports "
                    f"{len(extension.missing_symbols)} torch symbol(s) that torch {torch.version} does not export "
                    f"(e.g. {sample}): {why}",
                    fix,
                    notes,
                    subject=key,
                )
            )
    return findings


def cuda_leftovers(env: Environment, torch_replaced: bool) -> list[str]:
    """Installed CUDA-only packages (nvidia-*, triton) that no other package requires; with
    ``torch_replaced``, the installed torch's own requirements do not count (it is about to be replaced)."""
    candidates = {canonicalize_name(package.name): package for package in env.packages if is_cuda_only_package(package.name)}
    needed_elsewhere = set()
    for package in env.packages:
        name = canonicalize_name(package.name)
        if (torch_replaced and name == "torch") or name in candidates:
            continue
        for text in package.requires:
            try:
                needed_elsewhere.add(canonicalize_name(Requirement(text).name))
            except InvalidRequirement:
                continue
    return sorted(candidates[name].name for name in candidates if name not in needed_elsewhere)


def check_cuda_leftovers(ctx: Context) -> list[Finding]:
    """DR025: a CPU-only torch beside the CUDA libraries and Triton a CUDA build brought (pip keeps them when
    torch is replaced): gigabytes nothing loads."""
    torch, env = ctx.env.torch, ctx.env
    if torch is None or env.planning or torch.build != "cpu":
        return []
    leftovers = cuda_leftovers(env, torch_replaced=False)
    if not leftovers:
        return []
    shown = ", ".join(leftovers[:6]) + (f" and {len(leftovers) - 6} more" if len(leftovers) > 6 else "")
    return [
        Finding(
            "DR025",
            "warning",
            f"torch {torch.version} is a CPU-only build but {len(leftovers)} CUDA-only package(s) a CUDA build "
            f"brought are still installed ({shown}); nothing else installed requires them",
            f"pip uninstall -y {' '.join(leftovers)}",
        )
    ]


def check_plan(ctx: Context) -> list[Finding]:
    """DR060: the requested release (--target-torch), or in planning mode any release, has no build that fits."""
    plan = ctx.plan
    if ctx.target is not None and (plan is None or not plan.requested_fits):
        fix, notes = ctx.plan_fix() if plan is not None else ("", [ctx.no_plan_note()])
        if plan is not None:
            notes.insert(0, f"newest release that fits: {plan.choice.label}")
        return [
            Finding(
                "DR060",
                "error",
                f"no torch {ctx.target.version} wheel fits {_machine_text(ctx.machine)}: "
                + "; ".join(ctx.plan_reasons),
                fix,
                notes,
            )
        ]
    if plan is None and ctx.env.planning:
        return [
            Finding(
                "DR060",
                "error",
                f"no torch release torchpatch knows has a wheel for {_machine_text(ctx.machine)}"
                + (": " + "; ".join(undriven_gpus(ctx.machine)) if undriven_gpus(ctx.machine) else ""),
                "",
                [ctx.no_plan_note()],
            )
        ]
    return []


def _machine_text(machine: Machine) -> str:
    gpus = ", ".join(capability_text(cap) for cap in machine.gpus) or "no GPU"
    driver = f"driver {machine.driver_text}" if machine.driver else "any driver"
    python = f"Python {machine.python_text}" if machine.python else "any Python"
    return f"{python}, {gpus}, {driver}"


CHECKS: tuple[Callable[[Context], list[Finding]], ...] = (
    check_torch_present,
    check_python,
    check_advisories,
    check_gpus,
    check_torch_warnings,
    check_driver,
    check_packages,
    check_extensions,
    check_cuda_leftovers,
    check_plan,
)


def diagnose(env: Environment, target: str | None = None) -> Diagnosis:
    """Run every check; ``target`` is a release such as ``"2.11"`` or ``"2.11.0"``."""
    installed = _release_of(env.torch.version) if env.torch else None
    target_release = facts.release(target) if target else None
    target_patch = target if target and target.count(".") >= 2 else None
    companions = [name for name in PINNABLE_COMPANIONS if env.package(name) is not None]
    ctx = Context(env, installed, target_release, target_patch, machine_of(env), companions)
    torch = env.torch
    installed_tag = _installed_tag(torch) if torch is not None else None
    planned = {
        canonicalize_name(package.name): package.version
        for package in env.packages
        if canonicalize_name(package.name) in PLANNED_COMPANIONS
    }
    if torch is not None and torch.build not in ("cpu", "cuda"):
        # The facts cover PyPI's CPU and CUDA wheels: a ROCm or XPU install is kept, never "fixed" to CUDA/CPU.
        ctx.plan, ctx.plan_reasons = None, []
    else:
        ctx.plan, ctx.plan_reasons = make_plan(
            ctx.machine,
            torch.public_version if torch is not None else None,
            installed_tag,
            planned,
            target=target_release,
            target_patch=target_patch,
            cuda_leftovers=cuda_leftovers(env, torch_replaced=True),
        )
    findings: list[Finding] = []
    for check in CHECKS:
        findings.extend(check(ctx))
    if EXPLAINS_CUDA_WARNINGS & {finding.code for finding in findings}:
        # torch's warning is the symptom of a finding that already says why and what to do; the torch
        # line of the report still shows it.
        findings = [finding for finding in findings if finding.code != "DR024"]
    order = {severity: rank for rank, severity in enumerate(SEVERITIES)}
    findings.sort(key=lambda finding: (order[finding.severity], finding.code))
    findings = one_finding_per_package(findings)
    plan = ctx.plan
    plan_command = plan.command() if plan is not None else ""
    return Diagnosis(
        findings,
        plan,
        target_release or installed or (plan.choice.release if plan else None),
        ctx.plan_reasons,
        companions,
        plan_command,
    )


def one_finding_per_package(findings: list[Finding]) -> list[Finding]:
    """Findings about one package that share their fix become one (the first, most severe); the others'
    messages become its notes: a companion built for another torch is one problem with one command."""
    kept: list[Finding] = []
    first: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        key = (finding.subject, finding.fix)
        if not finding.subject or key not in first:
            kept.append(finding)
            if finding.subject:
                first[key] = finding
            continue
        first[key].notes.append(f"also {finding.code} {finding.name}: {finding.message}")
        first[key].notes.extend(note for note in finding.notes if note not in first[key].notes)
    return kept


def _installed_tag(torch: TorchInstall) -> str | None:
    if torch.build == "cpu":
        return "cpu"
    if torch.build == "cuda" and torch.cuda:
        return _tag_of(torch.cuda)
    return None
