"""Knowledge coverage: how much of the catalog and of the wheels' own facts torchpatch's rules answer.

    python bench/coverage.py [--catalog PATH] [--projects DIR ...] [--min-torch NAME=X.Y ...] [--dump FILE]

Figures (README, section "Knowledge and coverage"):

1. catalog rows whose "static" column is yes or partly, and how many a rule names in ``catalog_ids``
   (a row can be answered in part: this counts rows with at least one rule);
2. the newest release's wheel deprecations (rules/data/api_db.json.gz; distinct sites: one per
   function, class, module or member, whatever the number of spellings), and how many some rule
   watches by name — members of instances need a known receiver, so they are counted apart;
3. public names and modules of 2.4 that the newest release no longer has, and how many are watched;
4. TorchFix's own fixture findings reported (bench/torchfix_fixtures.py);
5. with --projects: findings per rule on real source trees (default rules plus NEW_RULES, target 2.15,
   each project's min-torch from its pins or ``--min-torch NAME=X.Y``); ``--dump`` keeps every finding.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

DEFAULT_CATALOG = Path("/work/shared/knowledge/pytorch-changes.md")
_ROW = re.compile(r"^\| (?P<id>[a-z0-9]+\.[a-z0-9.+-]+) \|(?P<rest>.*)$")


def catalog_rows(path: Path) -> dict[str, str]:
    """Row id → its "static" column (yes / partly / no / …)."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 6:
            rows[cells[0]] = cells[5].lower()
    return rows


def watched_names() -> set[str]:
    from torchpatch.rules import all_rules

    names: set[str] = set()
    for rule in all_rules():
        names |= set(rule.references_to) | set(rule.calls)
    return names


def _watched(name: str, names: set[str]) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:cut]) in names for cut in range(len(parts), 1, -1))


def measure(catalog: Path) -> dict:
    from torchpatch.rules import _api_db, all_rules
    import torchfix_fixtures

    figures: dict = {}
    rows = catalog_rows(catalog) if catalog.exists() else {}
    static = {row for row, value in rows.items() if value.startswith(("yes", "partly"))}
    answered = {row for rule in all_rules() for row in rule.catalog_ids}
    figures["catalog"] = (len(static & answered), len(static))
    figures["catalog_missing"] = sorted(static - answered)

    names = watched_names()
    newest = _api_db.releases()[-1]
    sites: dict[str, list[str]] = {}
    for deprecation in _api_db.deprecations().values():
        sites.setdefault(f"{deprecation.message}|{deprecation.qualname.rpartition('.')[2]}", []).append(
            deprecation.qualname)
    kinds = {d.qualname: d.kind for d in _api_db.deprecations().values()}
    by_kind: dict[str, list[int]] = {"member": [0, 0], "other": [0, 0]}
    for spellings in sites.values():
        kind = "member" if kinds[spellings[0]] == "member" else "other"
        by_kind[kind][1] += 1
        if any(_watched(name, names) for name in spellings):
            by_kind[kind][0] += 1
    figures["deprecations"] = by_kind
    removed = [r for r in _api_db.removed_names().values()
               if r.removed_in <= newest and (r.back_in is None or r.back_in > newest)
               and (r.first_in is None or r.first_in <= _api_db.releases()[0])]
    public = [r for r in removed if not any(part.startswith("_") for part in r.qualname.split("."))]
    figures["removals"] = (sum(_watched(r.qualname, names) for r in public), len(public))
    figures["removals_all"] = (sum(_watched(r.qualname, names) for r in removed), len(removed))
    fixtures = torchfix_fixtures.DEFAULT_FIXTURES
    if fixtures.is_dir():
        reported, missed = torchfix_fixtures.compare(fixtures)
        explained = sum((p.stem, row, code) in torchfix_fixtures.MISS_REASONS for p, row, code in missed)
        figures["torchfix"] = (len(reported), len(reported) + len(missed), explained)
    return figures


#: The rules of issue #11 measured on real code besides the default set (the opt-in TorchFix-parity
#: and wheel-default rules included, so that their findings can be read too).
NEW_RULES = "TP104,TP105,TP106,TP206,TP207,TP208,TP902,TP903,TP904,TP905"


def project_min_torch(project: Path, overrides: dict[str, str]) -> str:
    """The oldest release a project must run on: ``NAME=X.Y`` from the command line, else its own pins."""
    from torchpatch.engine.config import min_torch_from_pins, project_root
    from torchpatch.versions import OLDEST_KNOWN

    if project.name in overrides:
        return overrides[project.name]
    pinned = min_torch_from_pins(project_root(project))
    return str(pinned[0] if pinned else OLDEST_KNOWN)


def project_findings(project: Path, min_torch: str, target: str = "2.15", extra: str = NEW_RULES) -> list[dict]:
    """Every finding of the default rules plus ``extra`` on one tree (no configuration, no cache)."""
    import json
    import subprocess

    result = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--isolated", "--no-cache",
                             "--target-torch", target, "--min-torch", min_torch, "--extend-select", extra,
                             "--output-format", "json", "--exit-zero", str(project)],
                            capture_output=True, text=True)
    try:
        return json.loads(result.stdout or "[]")
    except json.JSONDecodeError:
        print(f"{project}: no JSON from torchpatch: {result.stderr.strip()[-300:]}", file=sys.stderr)
        return []


def findings_per_rule(projects: list[Path], min_torch: dict[str, str] | None = None,
                      dump: Path | None = None) -> dict[str, tuple[str, Counter]]:
    """Project name → (the min-torch it was checked with, findings per rule); ``dump`` gets every finding."""
    import json

    found: dict[str, tuple[str, Counter]] = {}
    every: dict[str, list[dict]] = {}
    for project in projects:
        minimum = project_min_torch(project, min_torch or {})
        findings = project_findings(project, minimum)
        every[project.name] = findings
        found[project.name] = (minimum, Counter(f["code"] for f in findings))
    if dump is not None:
        dump.write_text(json.dumps(every, indent=1), encoding="utf-8")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG)
    parser.add_argument("--projects", type=Path, nargs="*", default=[])
    parser.add_argument("--min-torch", action="append", default=[], metavar="NAME=X.Y",
                        help="min-torch for the project folder NAME (default: its own pins, else 2.4)")
    parser.add_argument("--dump", type=Path, help="write every project finding to this JSON file")
    args = parser.parse_args(argv)
    figures = measure(args.catalog)
    done, total = figures["catalog"]
    print(f"catalog rows (static yes/partly) with a rule: {done} of {total}")
    if figures["catalog_missing"]:
        print("  without a rule: " + ", ".join(figures["catalog_missing"]))
    other, member = figures["deprecations"]["other"], figures["deprecations"]["member"]
    print(f"wheel deprecations in the newest release (distinct sites): functions/classes/modules watched "
          f"{other[0]} of {other[1]}; members watched by name {member[0]} of {member[1]}")
    print(f"public names and modules of 2.4 gone in the newest release, watched: {figures['removals'][0]} of "
          f"{figures['removals'][1]} (private ones included: {figures['removals_all'][0]} of "
          f"{figures['removals_all'][1]})")
    if "torchfix" in figures:
        reported, total, explained = figures["torchfix"]
        print(f"TorchFix fixture findings reported: {reported} of {total} (the other {total - reported}: "
              f"{explained} with a documented reason)")
    if args.projects:
        overrides = dict(item.split("=", 1) for item in args.min_torch)
        per_project = findings_per_rule(args.projects, overrides, args.dump)
        totals: Counter = Counter()
        new = set(NEW_RULES.split(","))
        for project, (minimum, counts) in per_project.items():
            totals.update(counts)
            print(f"{project} (min-torch {minimum}, target 2.15): "
                  + ", ".join(f"{code} {n}" for code, n in sorted(counts.items())))
        print("all: " + ", ".join(f"{code} {n}" for code, n in sorted(totals.items())))
        print(f"all, {sum(totals.values())} findings; of the rules measured on top of the defaults "
              f"({NEW_RULES}): {sum(n for code, n in totals.items() if code in new)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
