"""How well `pytest --torchpatch` and `torchpatch check --from-warnings` place torch's warnings (issue #24).

Copies a snippet suite (default: tests/fixtures/runtime_suite/torch_snippets.py, one test per snippet, each line
where torch warns marked ``# torch warns`` or ``# torch warns: TPxxx``) into a project of its own, runs it with
``--torchpatch --torchpatch-report out.json`` (and ``-n N`` with ``--workers N``), reads the saved terminal output
back with ``torchpatch check --from-warnings`` and prints, for both, the share of marked lines found at the
right file and line, the share with the right code (the marked rule, or TP002 where none is marked), and the
lines reported that are not marked.

    python bench/runtime_accuracy.py [--suite FILE] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "runtime_suite" / "torch_snippets.py"
TEST_FILE = "test_torch_snippets.py"
RUNTIME_CODE = "TP002"
_MARK = re.compile(r"#\s*torch warns(?::\s*(?P<code>TP\d{3}))?\s*$")


def expected_lines(text: str) -> dict[int, str]:
    """Marked line → the code that should stand there."""
    marks = {}
    for row, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks[row] = match["code"] or RUNTIME_CODE
    return marks


@dataclass
class Score:
    expected: int
    found: int
    right_code: int
    unexpected: list[int]

    @property
    def line_share(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def code_share(self) -> float:
        return self.right_code / self.expected if self.expected else 1.0

    def to_json(self) -> dict:
        return {"expected": self.expected, "found": self.found, "right_code": self.right_code,
                "line_share": round(self.line_share, 4), "code_share": round(self.code_share, 4),
                "unexpected_lines": self.unexpected}


def score(rows: list[dict], marks: dict[int, str]) -> Score:
    codes_at: dict[int, set[str]] = {}
    for row in rows:
        if Path(row["filename"]).name == TEST_FILE:
            codes_at.setdefault(row["location"]["row"], set()).add(row["code"])
    found = sum(1 for line in marks if line in codes_at)
    right = sum(1 for line, code in marks.items() if code in codes_at.get(line, set()))
    return Score(len(marks), found, right, sorted(set(codes_at) - set(marks)))


def run_suite(suite: Path, workers: int, project: Path) -> tuple[list[dict], list[dict], str]:
    """The plugin's report rows, the rows `check --from-warnings` reads from the saved output, and that output."""
    shutil.copy(suite, project / TEST_FILE)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--torchpatch",
               "--torchpatch-report", "out.json", TEST_FILE]
    if workers:
        command += ["-n", str(workers)]
    run = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    (project / "pytest-output.txt").write_text(output, encoding="utf-8")
    if not (project / "out.json").is_file():
        raise SystemExit(f"the pytest run wrote no report (exit {run.returncode}):\n{output[-3000:]}")
    plugin_rows = json.loads((project / "out.json").read_text(encoding="utf-8"))
    check = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--no-cache", "--output-format", "json",
                            "--from-warnings", "pytest-output.txt"], cwd=project, capture_output=True, text=True,
                           timeout=600)
    if check.returncode not in (0, 1):
        raise SystemExit(f"check --from-warnings failed (exit {check.returncode}): {check.stderr}")
    return plugin_rows, json.loads(check.stdout), output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--workers", type=int, default=0, help="run the suite with pytest-xdist -n N")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    marks = expected_lines(args.suite.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as folder:
        plugin_rows, log_rows, _ = run_suite(args.suite, args.workers, Path(folder))
    scores = {"plugin": score(plugin_rows, marks), "from_warnings": score(log_rows, marks)}
    if args.json:
        print(json.dumps({name: value.to_json() for name, value in scores.items()}, indent=2))
        return 0
    for name, value in scores.items():
        print(f"{name:>14}: {value.found}/{value.expected} lines ({value.line_share:.1%}), "
              f"{value.right_code}/{value.expected} with the right code ({value.code_share:.1%}), "
              f"unmarked lines reported: {value.unexpected or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
