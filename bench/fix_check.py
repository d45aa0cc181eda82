"""Run ``torchpatch check --fix`` (safe fixes only) on pinned real packages and check the result.

For each pinned release the script downloads the wheel from PyPI (its ``.py`` files are the
package's source), takes the package's own ``torch`` pin from the wheel's METADATA as
``--min-torch`` (the oldest release torchpatch knows, 2.4, when the pin is older or absent), runs
``--fix`` on a copy, and checks every file the fixes changed:

* it still compiles;
* pyflakes reports no undefined name that it did not report before (the fixed file still
  imports what it uses);

and finally runs the tests that check the safe fixes' behaviour on real torch
(``pytest -m torch`` over the fix-behaviour test files), so the fixes applied here are the ones
those tests pin down.

Usage (from the repo root, in a venv with torchpatch, pyflakes and torch 2.13)::

    python bench/fix_check.py                       # the default pins below
    python bench/fix_check.py --packages accelerate==1.10.1,timm==1.0.19
    python bench/fix_check.py --unsafe-fixes        # the unsafe set too (expect semantic changes)
    python bench/fix_check.py --no-tests            # skip the pytest run
    python bench/fix_check.py --set sample4         # the packages of the fourth hand-read sample
    python bench/fix_check.py --packages none --tree mmcv-2.2.0=DIR:2.4   # a source tree (git checkout)

Downloads and copies live in ``bench/.cache/`` (gitignored); a JSON report of every changed file
goes to ``bench/.cache/fix-check/report.json``.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
WHEELS = CACHE / "packages" / "wheels"
WORK = CACHE / "fix-check"

#: Real PyTorch users, pinned so the counts can be compared across torchpatch versions.
DEFAULT_PACKAGES = (
    "accelerate==1.15.0", "timm==1.0.19", "kornia==0.8.1", "mmengine==0.10.7", "torch_geometric==2.6.1",
    "litgpt==0.5.13", "peft==0.17.1", "torchmetrics==1.8.2", "ultralytics==8.4.190", "lightning==2.5.5",
    "diffusers==0.42.1", "transformers==5.24.0",
)

#: The fourth hand-read sample's packages (bench/trust_samples/sample4.tsv); with mmcv 2.2.0 and
#: xformers 0.0.35 from their git tags (``--tree``), which PyPI ships only as sdists that need a build.
SAMPLE4_PACKAGES = (
    "vllm==0.33.0", "sglang==0.5.23", "megatron-core==0.16.1", "lightning-thunder==0.2.6", "mmdet==3.3.0",
    "mmpretrain==1.2.0", "open_clip_torch==3.3.0", "trl==1.16.0", "mosaicml==0.32.1", "flair==0.15.1",
    "fastai==2.8.12", "unsloth==2026.10.9", "stable-baselines3==2.9.2", "deepspeed-mii==0.3.3", "liger-kernel==0.8.5",
)
SETS = {"default": DEFAULT_PACKAGES, "sample4": SAMPLE4_PACKAGES}

#: Tests that run fixed code on real torch (the behaviour the safe fixes must keep).
BEHAVIOUR_TESTS = ("tests/test_fix_safety.py", "tests/test_rules_amp_sdpa.py", "tests/test_rules_jit_quant_onnx.py",
                   "tests/test_rules_catalog_extra.py", "tests/test_rules_attention_compile.py", "tests/test_api_table.py")

KNOWN = [f"2.{minor}" for minor in range(4, 16)]
_UNDEFINED = re.compile(r"undefined name '([^']+)'")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fetch(requirement: str) -> Path:
    """The wheel of ``name==version``, downloaded once."""
    name, _, version = requirement.partition("==")
    WHEELS.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[-_.]+", "_", name).lower()
    found = [w for w in WHEELS.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-")]
    if not found:
        _log(f"downloading {requirement}")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--dest", str(WHEELS), requirement], check=True)
        found = [w for w in WHEELS.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-")]
    if not found:
        sys.exit(f"fix_check: no wheel for {requirement}")
    return found[0]


def min_torch_of(wheel: zipfile.ZipFile) -> str:
    """The package's own torch floor (``Requires-Dist: torch>=X``), clamped to what torchpatch knows."""
    metadata_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode("utf-8", "replace"))
    floors = []
    for line in metadata.get_all("Requires-Dist") or ():
        requirement, _, marker = line.partition(";")
        if "extra ==" in marker:
            continue
        match = re.match(r"\s*torch\s*(?:\[[^\]]*\])?\s*(?:\()?\s*(.*)", requirement)
        if not match or re.match(r"\s*torch[\w-]", requirement):
            continue
        for operator, version in re.findall(r"(>=|==|~=|>)\s*([0-9][0-9.]*)", match.group(1)):
            floors.append(tuple(int(p) for p in version.split(".")[:2]))
    if not floors:
        return KNOWN[0]
    major, minor = max(floors)
    chosen = f"{major}.{minor}"
    if (major, minor) < (2, 4):
        return KNOWN[0]
    return chosen if chosen in KNOWN else KNOWN[-1]


def unpack(wheel_path: Path, into: Path) -> str:
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    with zipfile.ZipFile(wheel_path) as wheel:
        for name in wheel.namelist():
            if name.endswith((".py", ".ipynb")) and ".dist-info/" not in name:
                wheel.extract(name, into)
        return min_torch_of(wheel)


def pyflakes_undefined(path: Path) -> set[str]:
    result = subprocess.run([sys.executable, "-m", "pyflakes", str(path)], capture_output=True, text=True)
    return set(_UNDEFINED.findall(result.stdout))


def check_package(requirement: str, unsafe: bool, tree: Path | None = None, tree_min: str = KNOWN[0]) -> dict:
    before_dir = WORK / "before" / requirement
    after_dir = WORK / "after" / requirement
    if tree is None:
        min_torch = unpack(fetch(requirement), before_dir)
    else:  # a source tree: its Python files, with the minimum given on the command line
        if before_dir.exists():
            shutil.rmtree(before_dir)
        for source in tree.rglob("*"):
            if source.suffix in (".py", ".ipynb") and source.is_file() and ".git" not in source.parts:
                (before_dir / source.relative_to(tree)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, before_dir / source.relative_to(tree))
        min_torch = tree_min
    if after_dir.exists():
        shutil.rmtree(after_dir)
    shutil.copytree(before_dir, after_dir)
    # The copies live under bench/.cache/, which the repository's .gitignore excludes: without
    # --no-respect-gitignore torchpatch (rightly) checks nothing there and every count is 0.
    command = [sys.executable, "-m", "torchpatch", "check", "--isolated", "--no-respect-gitignore", "--fix", "--quiet",
               "--exit-zero",
               "--min-torch", min_torch, "--target-torch", KNOWN[-1], "--output-format", "concise"]
    if unsafe:
        command.append("--unsafe-fixes")
    run = subprocess.run([*command, "."], cwd=after_dir, capture_output=True, text=True)
    if "No Python files found" in run.stderr:
        sys.exit(f"fix_check: torchpatch checked nothing in {after_dir}: {run.stderr.strip()}")
    files = sorted(p.relative_to(before_dir) for p in before_dir.rglob("*.py"))
    changed, failures = [], []
    for relative in files:
        old, new = before_dir / relative, after_dir / relative
        if old.read_bytes() == new.read_bytes():
            continue
        changed.append(str(relative))
        try:
            compile(new.read_bytes(), str(relative), "exec", dont_inherit=True)
        except SyntaxError as error:
            failures.append({"file": str(relative), "problem": f"does not compile: {error}"})
            continue
        new_undefined = pyflakes_undefined(new) - pyflakes_undefined(old)
        if new_undefined:
            failures.append({"file": str(relative), "problem": f"new undefined names: {sorted(new_undefined)}"})
    return {"package": requirement, "min_torch": min_torch, "python_files": len(files), "changed_files": changed,
            "failures": failures, "torchpatch_exit": run.returncode,
            "torchpatch_errors": run.stderr.strip().splitlines()[-5:] if run.returncode > 1 else []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", help="comma-separated name==version (default: the pinned set); 'none' for none")
    parser.add_argument("--set", choices=sorted(SETS), default="default", help="a named set of pins")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR[:MIN]",
                        help="also a source tree (e.g. a git checkout), with its min-torch (default 2.4)")
    parser.add_argument("--unsafe-fixes", action="store_true", help="apply the unsafe fixes too")
    parser.add_argument("--no-tests", action="store_true", help="skip the fix-behaviour tests on real torch")
    args = parser.parse_args(argv)
    if args.packages == "none":
        packages = []
    else:
        packages = args.packages.split(",") if args.packages else list(SETS[args.set])
    trees = []
    for item in args.tree:
        name, _, rest = item.partition("=")
        folder, _, minimum = rest.partition(":")
        trees.append((name, Path(folder), minimum or KNOWN[0]))
    reports = []
    for requirement, tree, tree_min in [*((p, None, KNOWN[0]) for p in packages), *trees]:
        report = check_package(requirement, args.unsafe_fixes, tree, tree_min)
        reports.append(report)
        _log(f"{requirement:28} min-torch {report['min_torch']:5} files {report['python_files']:5} "
             f"changed {len(report['changed_files']):4} failures {len(report['failures'])}")
        for failure in report["failures"]:
            _log(f"    {failure['file']}: {failure['problem']}")
    tests_ok, tests_said = True, "skipped"
    if not args.no_tests:
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", "-m", "torch",
                                 *BEHAVIOUR_TESTS], cwd=ROOT, capture_output=True, text=True)
        tests_ok = result.returncode == 0
        counts = [line for line in result.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
        summary = counts[-1].strip("= ") if counts else "(no summary)"
        tests_said = f"{'passed' if tests_ok else 'FAILED'} ({summary})"
        _log(f"fix-behaviour tests on real torch: {summary}")
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / ("report-unsafe.json" if args.unsafe_fixes else "report.json")).write_text(json.dumps(reports, indent=1))
    total_files = sum(r["python_files"] for r in reports)
    total_changed = sum(len(r["changed_files"]) for r in reports)
    total_failures = sum(len(r["failures"]) for r in reports)
    print(f"{len(reports)} packages, {total_files} Python files, {total_changed} changed by --fix"
          f"{' --unsafe-fixes' if args.unsafe_fixes else ''}, {total_failures} broken"
          f" (not compiling or new undefined names); behaviour tests {tests_said}")
    return 0 if total_failures == 0 and tests_ok else 1


if __name__ == "__main__":
    sys.exit(main())
