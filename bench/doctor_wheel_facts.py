"""Re-read the platform facts doctor relies on from PyPI's real torch wheels; writes tests/doctor/wheel-facts.json.

Per CPython 3.8-3.15, `pip index versions torch --python-version 3.X --only-binary=:all:` lists the releases
that have a wheel for it (the Python range per release). Per release, the default (PyPI) wheel is
downloaded (0.8-0.9 GB each, one at a time, deleted after reading) and its METADATA pin of the CUDA
runtime (the CUDA update), torch/version.py and the arch flags string that torch._C._cuda_getArchFlags()
returns (stored in libtorch_python.so; a compute_XY entry would be PTX) are read.

    PIP_CONSTRAINT=/dev/null python bench/doctor_wheel_facts.py [--releases 2.13.0 2.14.1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "doctor" / "wheel-facts.json"
PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
RELEASES = (
    "2.4.1",
    "2.5.1",
    "2.6.0",
    "2.7.1",
    "2.8.0",
    "2.9.1",
    "2.10.0",
    "2.11.0",
    "2.12.1",
    "2.13.0",
    "2.14.1",
    "2.15.0",
)
PLATFORMS = ("--platform", "manylinux_2_28_x86_64", "--platform", "manylinux1_x86_64")
# PyPI only: the machine's find-links (a local 2.13.0+cpu wheel) and constraints must not answer.
PIP_ENV = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS="", PIP_CONSTRAINT="")
INDEX = ("--index-url", "https://pypi.org/simple")


def pip(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, env=PIP_ENV, check=False
    )
    return done.stdout


def cp_wheels() -> dict[str, list[str]]:
    listing = {}
    for python in PYTHONS:
        out = pip(
            "index",
            "versions",
            "torch",
            *INDEX,
            "--python-version",
            python,
            "--only-binary=:all:",
            "--implementation",
            "cp",
            *PLATFORMS,
        )
        match = re.search(r"Available versions: (.*)", out)
        versions = [v.strip() for v in match.group(1).split(",")] if match else []
        listing[python] = sorted(
            (v for v in versions if re.fullmatch(r"2\.(\d+)\.\d+", v) and int(v.split(".")[1]) >= 4),
            key=lambda v: tuple(map(int, v.split("."))),
        )
    return listing


def default_build(version: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        pip(
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            *PLATFORMS,
            *INDEX,
            f"torch=={version}",
            "-d",
            folder,
        )
        wheel = next(Path(folder).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            meta = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            version_py = archive.read("torch/version.py").decode()
            binding = archive.read("torch/lib/libtorch_python.so")
    flags = re.search(rb"(?:sm|compute)_\d+(?: (?:sm|compute)_\d+)+", binding)
    pin = re.search(
        r"Requires-Dist: (nvidia-cuda-runtime-cu12) ?\(?==([\d.]+)|Requires-Dist: (cuda-toolkit\[[^\]]*\])==([\d.]+)",
        meta,
    )
    return {
        "wheel": wheel.name,
        "version_py": re.search(r"__version__ = '([^']+)'", version_py).group(1),
        "cuda": (re.search(r"cuda: Optional\[str\] = '([^']+)'", version_py) or [None, None])[1],
        "cuda_runtime_pin": (f"{pin.group(1)}=={pin.group(2)}" if pin.group(1) else f"{pin.group(3)}=={pin.group(4)}")
        if pin
        else None,
        "arch_flags": flags.group(0).decode() if flags else "",
        "classifiers": re.findall(r"Programming Language :: Python :: (3\.\d+)$", meta, re.MULTILINE),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", nargs="*", default=list(RELEASES))
    parser.add_argument("--skip-listing", action="store_true")
    args = parser.parse_args()
    facts = json.loads(OUT.read_text()) if OUT.exists() else {"default_builds": {}}
    if not args.skip_listing:
        facts["cp_wheels"] = cp_wheels()
    for version in args.releases:
        facts["default_builds"][version] = default_build(version)
        print(version, facts["default_builds"][version]["arch_flags"], flush=True)
    OUT.write_text(json.dumps(facts, indent=1) + "\n")


if __name__ == "__main__":
    main()
