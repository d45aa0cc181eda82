"""Render a doctor diagnosis as text (`full`) or JSON (`json`)."""

from __future__ import annotations

import json
from typing import Any

from packaging.utils import canonicalize_name

from torchpatch import platform_facts as facts
from torchpatch.doctor.checks import Diagnosis, _release_of
from torchpatch.doctor.probes import COMPANIONS, Environment, Package, mentions_torch
from torchpatch.platform_facts import capability_text


def _torch_json(env: Environment) -> dict[str, Any] | None:
    torch = env.torch
    if torch is None:
        return None
    release = _release_of(torch.version)
    return {
        "version": torch.version,
        "build": torch.build,
        "cuda": torch.cuda,
        "hip": torch.hip,
        "arch_list": list(torch.arch_list),
        "cxx11_abi": torch.cxx11_abi,
        "importable": torch.importable,
        "import_error": torch.import_error or None,
        "source": torch.source,
        "warnings": list(torch.probe_warnings),
        "known_release": str(release.version) if release else None,
    }


def _python_json(env: Environment, diagnosis: Diagnosis) -> dict[str, Any] | None:
    if not env.python:
        return None
    release = diagnosis.plan_release or (_release_of(env.torch.version) if env.torch else None)
    result: dict[str, Any] = {"version": env.python_text}
    if release is not None:
        result["torch_release"] = str(release.version)
        result["supported_range"] = [".".join(map(str, release.python_min)), ".".join(map(str, release.python_max))]
        result["supported"] = release.supports_python(env.python[:2])
    return result


def to_json(env: Environment, diagnosis: Diagnosis) -> dict[str, Any]:
    plan = diagnosis.plan
    return {
        "mode": "planning" if env.planning else "inspect",
        "python": _python_json(env, diagnosis),
        "torch": _torch_json(env),
        "gpus": [
            {
                "index": gpu.index,
                "name": gpu.name,
                "capability": f"{gpu.capability[0]}.{gpu.capability[1]}" if gpu.capability else None,
                "arch": capability_text(gpu.capability) if gpu.capability else None,
                "source": gpu.source,
            }
            for gpu in env.gpus
        ],
        "driver": {"version": env.driver, "source": env.driver_source or None},
        "packages": [{"name": package.name, "version": package.version} for package in env.packages],
        "extensions": [
            {
                "distribution": extension.distribution,
                "path": extension.path,
                "torch_symbols": len(extension.torch_symbols),
                "missing_symbols": len(extension.missing_symbols),
            }
            for extension in env.extensions
        ],
        "plan": None
        if plan is None
        else {
            "release": str(plan.choice.release.version),
            "version": plan.choice.version,
            "build": plan.choice.build.tag,
            "index_url": plan.choice.build.index_url,
            "driver_mode": plan.choice.driver_mode,
            "companions": [
                {
                    "name": step.name,
                    "installed": step.installed,
                    "requirement": step.requirement or None,
                    "index_url": step.index_url,
                }
                for step in plan.companions
            ],
            "requested": plan.requested,
            "requested_fits": plan.requested_fits,
            "command": diagnosis.plan_command,
            "notes": list(plan.notes),
        },
        "system": dict(env.system),
        "findings": [finding.to_json() for finding in diagnosis.findings],
        "notes": list(env.notes),
    }


def render_json(env: Environment, diagnosis: Diagnosis) -> str:
    return json.dumps(to_json(env, diagnosis), indent=2)


def _torch_line(env: Environment) -> str:
    torch = env.torch
    if torch is None:
        return "not installed"
    build = {
        "cpu": "CPU build",
        "cuda": f"CUDA {torch.cuda} build",
        "rocm": f"ROCm (HIP {torch.hip}) build",
        "xpu": "XPU build",
    }[torch.build]
    abi = "" if torch.cxx11_abi is None else (", C++11 ABI" if torch.cxx11_abi else ", pre-C++11 ABI")
    state = "imports" if torch.importable else "does NOT import"
    line = f"{torch.version} ({build}{abi}; {state}, seen by {torch.source})"
    if torch.arch_list:
        line += f"\n{'':10}kernels for {' '.join(torch.arch_list)}"
    for warning in torch.probe_warnings:
        line += f"\n{'':10}torch warned: {' '.join(warning.split())}"
    return line


def _worth_listing(package: Package) -> bool:
    """What collect_env lists: torch, its companions and dependents, the NVIDIA libraries, triton, numpy
    (the rest of torch's requirements stay in the JSON, where the pip-check findings use them)."""
    key = canonicalize_name(package.name)
    return (
        key in ("torch", "numpy")
        or key in COMPANIONS
        or key.startswith(("nvidia-", "cuda-"))
        or mentions_torch(package.requires)
    )


_SYSTEM_LABELS = (
    ("os", "OS"),
    ("kernel", "Kernel"),
    ("libc", "C library"),
    ("cpu", "CPU"),
    ("gcc", "GCC"),
    ("clang", "Clang"),
    ("cmake", "CMake"),
    ("nvcc", "nvcc"),
    ("cuda_runtime", "CUDA"),
    ("cudnn", "cuDNN"),
)


def _system_lines(env: Environment) -> list[str]:
    """collect_env's fields: OS, kernel, C library, CPU, compilers, CUDA runtime, cuDNN, numpy, nvidia-*."""
    lines = []
    for key, label in _SYSTEM_LABELS:
        value = env.system.get(key)
        if value:
            if key == "cpu" and env.system.get("cpu_count"):
                value = f"{value} ({env.system['cpu_count']} logical CPUs)"
            lines.append(f"{label:10}{value}")
    return lines


def render_full(env: Environment, diagnosis: Diagnosis) -> str:
    lines = ["torchpatch doctor" + (" — planning mode" if env.planning else "")]
    lines.append("")
    python = _python_json(env, diagnosis)
    if python:
        extra = ""
        if "supported_range" in python:
            low, high = python["supported_range"]
            extra = f" (torch {python['torch_release']} ships wheels for {low}–{high})"
        lines.append(f"{'Python':10}{python['version']}{extra}")
    else:
        lines.append(f"{'Python':10}not given")
    if not env.planning:
        lines.append(f"{'torch':10}{_torch_line(env)}")
    if env.gpus:
        for gpu in env.gpus:
            cap = capability_text(gpu.capability) if gpu.capability else "capability unknown"
            lines.append(f"{'GPU':10}{gpu.index}: {gpu.name} ({cap}; from {gpu.source})")
    else:
        lines.append(f"{'GPU':10}none" + ("" if env.planning else " found (no torch device, no nvidia-smi)"))
    driver = (
        f"{env.driver} (from {env.driver_source})"
        if env.driver
        else ("not given" if env.planning else "no NVIDIA driver found")
    )
    lines.append(f"{'Driver':10}{driver}")
    shown = [package for package in env.packages if _worth_listing(package)]
    if shown:
        listed = ", ".join(f"{package.name} {package.version}" for package in shown)
        lines.append(f"{'Packages':10}{listed}")
    if env.extensions:
        lines.append(f"{'Compiled':10}{len(env.extensions)} extension module(s) importing torch symbols")
    for note in env.notes:
        lines.append(f"{'Note':10}{note}")
    lines.extend(_system_lines(env))
    plan = diagnosis.plan
    # The plan stays in view while problems remain, also when it installs nothing new.
    shown = plan is not None and (env.planning or diagnosis.plan_command or plan.requested or diagnosis.has_problems)
    if plan is not None and shown:
        lines.append("")
        if plan.torch_changes or env.planning:
            lines.append(f"Install   {plan.choice.label}, CUDA driver: {plan.choice.driver_mode}")
        else:
            lines.append(f"Plan      keep the installed {plan.choice.label}")
        lines.append(f"  {diagnosis.plan_command or 'already installed'}")
        for note in plan.notes:
            lines.append(f"  note: {note}")
        if diagnosis.plan_reasons and plan.requested_fits:
            lines.append(f"  other builds: {'; '.join(diagnosis.plan_reasons)}")
    lines.append("")
    if diagnosis.findings:
        lines.append("Findings")
        for finding in diagnosis.findings:
            lines.append(f"  {finding.code} {finding.severity:7} {finding.name}: {finding.message}")
            if finding.fix:
                lines.append(f"      fix: {finding.fix}")
            for note in finding.notes:
                lines.append(f"      note: {note}")
        lines.append("")
    problems = sum(1 for finding in diagnosis.findings if finding.severity in ("error", "warning"))
    if problems:
        lines.append(f"{problems} problem(s) found.")
    else:
        lines.append("No problems found." if not env.planning else "A build fits.")
    known = facts.releases()
    lines.append(f"(facts for torch {known[0].version}–{known[-1].version}: torchpatch/data/platform.toml)")
    return "\n".join(lines)
