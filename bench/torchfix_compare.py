"""What torchpatch finds that TorchFix does not, and the reverse, on real source trees.

    python bench/torchfix_compare.py DIR ... [--min-torch NAME=X.Y ...] [--torchfix-output DIR] [--list]

Runs TorchFix (``torchfix`` with its default rules, the test extra pins 0.7.0) and torchpatch (default
rules plus the opt-in ones that answer a default TorchFix code, and bench/coverage.py's NEW_RULES, target 2.15,
each project's min-torch as in coverage.py) on each tree, and matches findings by file, row and meaning:
a TorchFix finding is "found by both" when torchpatch reports, on the same row of the same file, one of the
rules its TorchFix code redirects to (``--select TOR…``). Prints, per project and in all: found by both,
only TorchFix (each listed with ``--list``), only torchpatch (per rule). TorchFix does not read notebooks
or dependency files; those findings of ours are counted apart. ``--torchfix-output DIR`` reuses
``DIR/<project>.txt`` files of an earlier TorchFix run (TorchFix takes minutes per project).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

_TORCHFIX_LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>TOR\d+) (?P<message>.*)$")


def torchfix_findings(project: Path, saved: Path | None) -> list[tuple[str, int, str, str]]:
    """(resolved path, row, TOR code, message) for each TorchFix finding on a tree."""
    if saved is not None and (saved / f"{project.name}.txt").exists():
        text = (saved / f"{project.name}.txt").read_text(encoding="utf-8", errors="replace")
    else:
        text = subprocess.run(["torchfix", "."], capture_output=True, text=True, cwd=project.resolve()).stdout
    root = project.resolve()
    found = []
    for line in text.splitlines():
        match = _TORCHFIX_LINE.match(line)
        if match:
            found.append((str(_located(Path(match["path"]), root)), int(match["row"]), match["code"], match["message"]))
    return found


def _located(path: Path, root: Path) -> Path:
    """TorchFix prints paths relative to the folder it ran in: find the tree's own name in them."""
    if path.is_absolute():
        return path.resolve()
    parts = path.parts
    if root.name in parts:
        return root.joinpath(*parts[parts.index(root.name) + 1:])
    return (root / path).resolve()


def compare(project: Path, min_torch: str, saved: Path | None):
    from coverage import NEW_RULES, project_findings
    from torchpatch.engine.settings import torchfix_redirects

    redirects = torchfix_redirects()
    # TorchFix's default set leaves out TOR3xx, TOR4xx and TOR9xx; the opt-in rules answering the rest are added.
    answering = sorted({code for tor, codes in redirects.items() if not tor.startswith(("TOR3", "TOR4", "TOR9"))
                        for code in codes})
    ours = project_findings(project, min_torch, extra=",".join([NEW_RULES, *answering]))
    theirs = torchfix_findings(project, saved)
    at_row: dict[tuple[str, int], set[str]] = {}
    for finding in ours:
        at_row.setdefault((str(Path(finding["filename"]).resolve()), finding["location"]["row"]), set()).add(finding["code"])
    both, only_torchfix, matched = [], [], set()
    for path, row, code, message in theirs:
        hit = at_row.get((path, row), set()) & set(redirects.get(code, ()))
        if hit:
            both.append((path, row, code))
            matched |= {(path, row, ours_code) for ours_code in hit}
        else:
            only_torchfix.append((path, row, code, message))
    only_ours: Counter = Counter()
    not_python: Counter = Counter()
    for finding in ours:
        path = str(Path(finding["filename"]).resolve())
        if (path, finding["location"]["row"], finding["code"]) in matched:
            continue
        (only_ours if path.endswith((".py", ".pyi")) else not_python)[finding["code"]] += 1
    return both, only_torchfix, only_ours, not_python


def main(argv: list[str] | None = None) -> int:
    from coverage import project_min_torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", type=Path, nargs="+")
    parser.add_argument("--min-torch", action="append", default=[], metavar="NAME=X.Y")
    parser.add_argument("--torchfix-output", type=Path)
    parser.add_argument("--list", action="store_true", help="list every finding only TorchFix reports")
    args = parser.parse_args(argv)
    overrides = dict(item.split("=", 1) for item in args.min_torch)
    totals = {"both": Counter(), "torchfix": Counter(), "ours": Counter(), "not_python": Counter()}
    for project in args.projects:
        both, only_torchfix, only_ours, not_python = compare(project, project_min_torch(project, overrides),
                                                             args.torchfix_output)
        totals["both"].update(code for _, _, code in both)
        totals["torchfix"].update(code for _, _, code, _ in only_torchfix)
        totals["ours"].update(only_ours)
        totals["not_python"].update(not_python)
        print(f"{project.name}: both {len(both)}, only TorchFix {len(only_torchfix)}, "
              f"only torchpatch {sum(only_ours.values())} (+{sum(not_python.values())} in notebooks/dependency files)")
        if args.list:
            for path, row, code, message in only_torchfix:
                print(f"  only TorchFix: {path}:{row}: {code} {message}")
    for label, key in (("found by both (TorchFix codes)", "both"), ("only TorchFix", "torchfix"),
                       ("only torchpatch (.py)", "ours"), ("only torchpatch (notebooks, dependency files)", "not_python")):
        counts = totals[key]
        print(f"{label}: {sum(counts.values())}: " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
