"""Record what another torch release says about every oracle example (maintainer script).

Runs each rule example marked ``Invalid(..., torch_warns=...)`` or ``Valid(..., torch_runs_clean=True)``
through scripts/torch_oracle.py under the given Python (a throwaway virtualenv with that release, CPU
is enough) and writes ``tests/data/torch_oracle/<major.minor>.json``: per example, its code and what torch
said (warnings and error). tests/test_torch_oracle.py checks the record supports each example's claim
and has an entry for every oracle example, so the claims are checked against that release too.

    python3.11 -m venv /tmp/t215 && PIP_CONSTRAINT=/dev/null /tmp/t215/bin/pip install \\
        /work/wheels/torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl numpy
    python scripts/record_torch_oracle.py --python /tmp/t215/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from torchpatch.rules import all_rules
from torchpatch.rules.base import Invalid, Valid, example_code

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "scripts" / "torch_oracle.py"
RECORDS = ROOT / "tests" / "data" / "torch_oracle"


def oracle_examples() -> dict[str, str]:
    """Example id (as tests/test_torch_oracle.py names it) → its code."""
    found = {}
    for rule in all_rules():
        for number, example in enumerate(rule.INVALID):
            if isinstance(example, Invalid) and example.torch_warns:
                found[f"{rule.code}-invalid{number}"] = example_code(example)
        for number, example in enumerate(rule.VALID):
            if isinstance(example, Valid) and example.torch_runs_clean:
                found[f"{rule.code}-valid{number}"] = example_code(example)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="a Python whose torch is the release to record")
    args = parser.parse_args(argv)
    version = subprocess.run([args.python, str(RUNNER), "--torch-version"], capture_output=True, text=True)
    if version.returncode != 0:
        print(f"error: {args.python} cannot import torch: {version.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return 2
    release = ".".join(version.stdout.strip().split("+")[0].split(".")[:2])
    examples = oracle_examples()
    snippets = [{"id": key, "code": code} for key, code in examples.items()]
    done = subprocess.run([args.python, str(RUNNER)], input=json.dumps(snippets), capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        print(f"error: the oracle run failed: {done.stderr[-2000:]}", file=sys.stderr)
        return 2
    results = json.loads(done.stdout)
    record = {"torch": version.stdout.strip(),
              "examples": {key: {"code": examples[key], **results[key]} for key in sorted(results)}}
    RECORDS.mkdir(parents=True, exist_ok=True)
    target = RECORDS / f"{release}.json"
    target.write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{target}: {len(results)} examples under torch {record['torch']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
