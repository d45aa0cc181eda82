#!/usr/bin/env python3
"""Does a change keep every result? The full JSON output of a baseline commit and of the working tree, compared.

    python bench/same_results.py                        # baseline HEAD, the speed corpus + /work/realcode trees
    python bench/same_results.py --baseline e1eb464 --trees /path/a,/path/b
    python bench/same_results.py --no-corpus --select-all

For each tree (the four packages of ``run_bench.py``'s corpus, as one explicit sorted file list, and each
``--trees`` folder through torchpatch's own discovery, so notebooks and dependency files count too) and
for each rule selection (the default and ``--select ALL``), it runs ``torchpatch check --output-format
json --isolated --no-cache`` twice: with the baseline's sources (``git archive BASELINE src``, first on
``PYTHONPATH``) and with the working tree's; then the same with ``--diff --unsafe-fixes`` (every fix,
applied to a fixpoint, as a unified diff). Any byte of difference is reported with the first differing
finding, and the exit code is 1. Speed is not measured here. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench  # noqa: E402  (the corpus and its pins live there)

REPOSITORY = Path(__file__).resolve().parent.parent
REAL_CODE = ("/work/realcode/accelerate", "/work/realcode/litgpt", "/work/realcode/pytorch_geometric",
             "/work/realcode/torchtune")


def baseline_sources(revision: str, into: Path) -> Path:
    archive = into / "baseline.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(REPOSITORY), "archive", revision, "src"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run(source_root: Path | None, arguments: list[str], cwd: Path) -> tuple[str, str]:
    environment = dict(os.environ)
    if source_root is not None:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source_root), environment.get("PYTHONPATH")]))
    command = [sys.executable, "-c", "import sys, torchpatch; from torchpatch.frontends.cli import main; "
               "print(torchpatch.__file__, file=sys.stderr); sys.exit(main())", *arguments]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=environment)
    first_line = done.stderr.splitlines()[0] if done.stderr else ""
    return done.stdout, first_line


def first_difference(before: str, after: str) -> str:
    try:
        old, new = json.loads(before), json.loads(after)
    except ValueError:
        old, new = before.splitlines(), after.splitlines()
    for index, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return f"item {index}:\n  before: {str(a)[:400]}\n  after:  {str(b)[:400]}"
    return f"lengths differ: {len(old)} before, {len(new)} after"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="HEAD", help="the commit to compare with (default HEAD)")
    parser.add_argument("--trees", default=",".join(REAL_CODE), help="comma-separated folders (default: the /work/realcode trees)")
    parser.add_argument("--no-corpus", action="store_true", help="skip the speed corpus")
    parser.add_argument("--jobs", default="2")
    args = parser.parse_args(argv)
    cases: list[tuple[str, Path, list[str]]] = []
    if not args.no_corpus:
        files = [str(p) for p in run_bench.corpus_files(list(run_bench.PINNED))]
        cases.append((f"corpus ({len(files)} files)", run_bench.SOURCES_DIR, files))
    for tree in filter(None, args.trees.split(",")):
        if Path(tree).is_dir():
            cases.append((tree, Path(tree), ["."]))
        else:
            print(f"same_results: {tree}: not a folder, skipped", file=sys.stderr)
    modes = [("json", ["--output-format", "json"]), ("json, --select ALL", ["--output-format", "json", "--select", "ALL"]),
             ("--diff --unsafe-fixes", ["--diff", "--unsafe-fixes"]),
             ("--diff --unsafe-fixes --select ALL", ["--diff", "--unsafe-fixes", "--select", "ALL"])]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="torchpatch-same-") as folder:
        baseline = baseline_sources(args.baseline, Path(folder))
        for name, cwd, paths in cases:
            for label, options in modes:
                arguments = ["check", "--exit-zero", "--isolated", "--no-cache", "-j", args.jobs, *options, *paths]
                before, where_before = run(baseline, arguments, cwd)
                after, where_after = run(None, arguments, cwd)
                if where_before == where_after:
                    sys.exit(f"same_results: both runs imported {where_before}; is torchpatch installed from this tree?")
                count = before.count('"code":') if label.startswith("json") else before.count("\n+")
                if before == after:
                    print(f"same   {name} [{label}]: {len(before):,} bytes, {count} findings/added lines")
                else:
                    failures += 1
                    print(f"DIFFER {name} [{label}]: {first_difference(before, after)}")
    print("identical" if not failures else f"{failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
