"""Build real virtual environments, record them with `torchpatch doctor --record`, and run the fixes offline.

Writes tests/doctor/recordings/real-*.json. Each scenario is a real venv on this machine (torch 2.13.0+cpu
from the local wheel, torchvision 0.29.1 from the local mirror, an editable C extension compiled here, a
deleted libc10.so, no torch at all); `--with-251` adds torch 2.5.1 and torchao 0.18.0 (a 0.9 GB
download). Where the fix can run offline (the same packages are on local disk), the script runs it with
download.pytorch.org swapped for the local mirror, records again and stores which findings are left,
so the tests know that each such fix resolves its finding.

    python bench/doctor_recordings.py [--root /tmp/torchpatch-doctor-venvs] [--with-251]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORDINGS = REPO / "tests" / "doctor" / "recordings"
# The machine's offline packages: pip's find-links (torch 2.13.0+cpu) and the local mirrors.
OFFLINE = "--index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple --find-links /opt/wheels --find-links /opt/pypi-more/files"


def run(
    command: list[str] | str, env: dict[str, str] | None = None, quiet: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run a command; its output is shown when it fails, unless ``quiet`` (a failure the caller records)."""
    shell = isinstance(command, str)
    done = subprocess.run(command, shell=shell, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 and not quiet:
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return done


def make_venv(root: Path, name: str) -> Path:
    folder = root / name
    if folder.exists():
        shutil.rmtree(folder)
    run([sys.executable, "-m", "venv", str(folder)])
    python = folder / "bin" / "python"
    pip(python, "install", "-q", "packaging")
    return python


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PIP_CONSTRAINT="/dev/null")
    return run([str(python), "-m", "pip", *args], env=env)


def record(python: Path, path: Path) -> dict:
    """`torchpatch doctor --record` run inside the venv (torchpatch from this checkout, on PYTHONPATH)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    run(
        [str(python), "-m", "torchpatch", "doctor", "--record", str(path), "--output-format", "json"],
        env=env,
        quiet=True,
    )
    return json.loads(path.read_text(encoding="utf-8"))


def diagnose(recording: dict, target: str | None = None) -> dict:
    sys.path.insert(0, str(REPO / "src"))
    from torchpatch.doctor.checks import diagnose as run_diagnose
    from torchpatch.doctor.probes import recorded_environment

    diagnosis = run_diagnose(recorded_environment(recording), target)
    codes = sorted(finding.code for finding in diagnosis.findings)
    fixes: dict[str, str] = {}
    for finding in diagnosis.findings:
        fixes.setdefault(finding.code, finding.fix)
    expect = {"codes": codes, "exit": 1 if diagnosis.has_problems else 0, "fix": {k: v for k, v in fixes.items() if v}}
    return {**expect, "target": target} if target else expect


def offline(command: str) -> str:
    """A fix command with download.pytorch.org replaced by the local packages."""
    return re.sub(r"--index-url \S+", OFFLINE, command)


def check_fix(python: Path, root: Path, code: str, fix: str, name: str) -> dict:
    """Run ``fix`` in the venv (offline) and record again: which findings are left."""
    bin_dir = str(python.parent)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PIP_CONSTRAINT="/dev/null")
    command = offline(fix)
    done = run(command.replace("pip ", "python -m pip "), env=env, quiet=True)
    after = record(python, root / f"{name}-after-{code}.json")
    return {
        "command_run": command,
        "exit_status": done.returncode,
        "codes_after": diagnose(after)["codes"],
    }


def save(name: str, description: str, recording: dict, checks: dict | None = None, target: str | None = None) -> None:
    recording = dict(recording)
    recording["description"] = description + " (real venv, recorded by bench/doctor_recordings.py)"
    expect = diagnose(recording, target)
    if checks:
        expect["fixes_checked"] = checks
    recording["expect"] = expect
    (RECORDINGS / f"{name}.json").write_text(json.dumps(recording, indent=2) + "\n", encoding="utf-8")
    print(name, expect["codes"], {code: check["codes_after"] for code, check in (checks or {}).items()})


STALE_SOURCE = """
#include <Python.h>
/* A function an older torch exported and this one does not: what a stale build still imports. */
extern void _ZN2at21torchpatch_removed_apiEv(void);
static PyObject *call(PyObject *self, PyObject *args) { %s Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"call", call, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
"""


def editable_extension(root: Path) -> Path:
    project = root / "stale-ops"
    if project.exists():
        shutil.rmtree(project)
    (project / "stale_ops").mkdir(parents=True)
    (project / "stale_ops" / "__init__.py").write_text("from stale_ops import _C\n", encoding="utf-8")
    (project / "stale_ops" / "_C.c").write_text(STALE_SOURCE % "_ZN2at21torchpatch_removed_apiEv();", encoding="utf-8")
    (project / "setup.py").write_text(
        "from setuptools import Extension, setup\n"
        "setup(name='stale-ops', version='0.1.0', packages=['stale_ops'], install_requires=['torch'],\n"
        "      ext_modules=[Extension('stale_ops._C', ['stale_ops/_C.c'])])\n",
        encoding="utf-8",
    )
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/torchpatch-doctor-venvs"))
    parser.add_argument("--with-251", action="store_true", help="also torch 2.5.1 + torchao 0.18.0 (0.9 GB download)")
    parser.add_argument(
        "--groups", nargs="*", default=["no-torch", "cpu"], help="which venvs to build: no-torch, cpu (default: both)"
    )
    args = parser.parse_args()
    root: Path = args.root
    root.mkdir(parents=True, exist_ok=True)
    if "no-torch" in args.groups:
        no_torch(root)
    if "cpu" in args.groups:
        cpu(root)
    if args.with_251:
        torch251(root)


def no_torch(root: Path) -> None:
    # No torch at all: the plan is still filled.
    python = make_venv(root, "no-torch")
    save("real-no-torch", "a venv without torch", record(python, root / "no-torch.json"))
    # The same with --target-torch 2.13, whose CPU wheel is on local disk: the fix runs offline.
    recording = record(python, root / "no-torch.json")
    fix = diagnose(recording, "2.13")["fix"]["DR003"]
    checks = {"DR003": check_fix(python, root, "DR003", fix, "no-torch")}
    save("real-no-torch-target-213", "a venv without torch, asked for --target-torch 2.13", recording, checks, "2.13")


def cpu(root: Path) -> None:
    # torch 2.13.0+cpu alone (with numpy, as collect_env reports it).
    python = make_venv(root, "cpu")
    pip(python, "install", "-q", "torch==2.13.0", "numpy", "setuptools")
    save("real-torch213-cpu", "torch 2.13.0+cpu and numpy alone", record(python, root / "cpu.json"))

    # torchvision 0.29.1 (declares torch>=2.14.0, links libcudart.so.13) under torch 2.13.0+cpu.
    pip(python, "install", "-q", "--no-deps", "torchvision==0.29.1")
    recording = record(python, root / "torchvision.json")
    fix = diagnose(recording)["fix"]["DR040"]
    checks = {"DR040": check_fix(python, root, "DR040", fix, "torchvision")}
    save(
        "real-torchvision-for-other-torch",
        "torch 2.13.0+cpu with torchvision 0.29.1 (built for torch >= 2.14, CUDA 13) installed --no-deps",
        recording,
        checks,
    )
    pip(python, "uninstall", "-y", "-q", "torchvision")

    # An editable C extension whose in-place build still imports a torch symbol its source no longer uses.
    project = editable_extension(root)
    pip(python, "install", "-q", "--no-build-isolation", "--no-deps", "-e", str(project))
    (project / "stale_ops" / "_C.c").write_text(STALE_SOURCE % "", encoding="utf-8")  # source updated, not rebuilt
    recording = record(python, root / "stale.json")
    fix = diagnose(recording)["fix"]["DR051"]
    checks = {"DR051": check_fix(python, root, "DR051", fix, "stale")}
    save(
        "real-stale-editable-extension",
        "torch 2.13.0+cpu with an editable (pip install -e) C extension whose in-place .so imports a symbol torch "
        "does not export",
        recording,
        checks,
    )
    pip(python, "uninstall", "-y", "-q", "stale-ops")

    # A deleted libc10.so: `import torch` fails.
    libc10 = next((python.parent.parent / "lib").glob("python3*/site-packages/torch/lib/libc10.so"))
    libc10.unlink()
    recording = record(python, root / "broken.json")
    fix = diagnose(recording)["fix"]["DR004"]
    checks = {"DR004": check_fix(python, root, "DR004", fix, "broken")}
    save("real-torch-so-deleted", "torch 2.13.0+cpu with torch/lib/libc10.so deleted", recording, checks)


def torch251(root: Path) -> None:
    python = make_venv(root, "torch251")
    wheels = root / "wheels"
    if not list(wheels.glob("torch-2.5.1-*.whl")):
        pip(
            python,
            "download",
            "-q",
            "--no-deps",
            "--index-url",
            "https://pypi.org/simple",
            "torch==2.5.1",
            "-d",
            str(wheels),
        )
    pip(python, "install", "-q", "--no-deps", str(next(wheels.glob("torch-2.5.1-*.whl"))))
    pip(python, "install", "-q", "--no-deps", "torchao==0.18.0", "numpy")
    save(
        "real-torch251-torchao018",
        "torch 2.5.1 (cu124, PyPI, installed --no-deps so its NVIDIA libraries are missing) with torchao 0.18.0",
        record(python, root / "torch251.json"),
    )


if __name__ == "__main__":
    main()
