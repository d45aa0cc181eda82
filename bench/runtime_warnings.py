"""Aggregate `pytest --torchpatch-report` JSON reports across projects: the torch warnings no static rule covers
yet (TP002), grouped by torch's message, are the material for new rules (issue #24).

    python bench/runtime_warnings.py project-a/out.json project-b/out.json [--markdown] [--all]

A message's numbers, hex addresses and quoted values are normalised so that the same warning from different
call sites groups together; each group lists how many projects, lines and hits it has, and example lines.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

RUNTIME_CODE = "TP002"
EXAMPLES = 3
_VARIABLE = re.compile(r"0x[0-9a-f]+|\b\d+(\.\d+)?\b|'[^']*'|\"[^\"]*\"|\(Triggered internally at [^)]*\)")


def normalised(message: str) -> str:
    return " ".join(_VARIABLE.sub("…", message).split())


def aggregate(reports: list[Path], include_covered: bool = False) -> list[dict]:
    groups: dict[tuple[str, str], dict] = defaultdict(lambda: {"projects": set(), "lines": 0, "hits": 0,
                                                               "examples": [], "category": ""})
    for report in reports:
        try:
            rows = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise SystemExit(f"{report}: not a torchpatch JSON report ({error})") from None
        for row in rows:
            if not row.get("runtime") or (row["code"] != RUNTIME_CODE and not include_covered):
                continue
            group = groups[(row["code"], normalised(row.get("torch_message", row["message"])))]
            group["projects"].add(str(report.resolve().parent))
            group["lines"] += 1
            group["hits"] += int(row.get("count", 1))
            group["category"] = row.get("category", "")
            if len(group["examples"]) < EXAMPLES:
                group["examples"].append(f"{row['filename']}:{row['location']['row']}")
    table = [{"code": code, "message": message, "category": group["category"], "projects": len(group["projects"]),
              "lines": group["lines"], "hits": group["hits"], "examples": group["examples"]}
             for (code, message), group in groups.items()]
    return sorted(table, key=lambda entry: (-entry["projects"], -entry["lines"], entry["message"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--all", action="store_true", help="also the warnings a static rule covers")
    args = parser.parse_args(argv)
    table = aggregate(args.reports, args.all)
    if not args.markdown:
        print(json.dumps(table, indent=2, ensure_ascii=False))
        return 0
    print("| projects | lines | hits | code | category | torch's message | examples |")
    print("| ---: | ---: | ---: | --- | --- | --- | --- |")
    for entry in table:
        message = entry["message"].replace("|", "\\|")
        print(f"| {entry['projects']} | {entry['lines']} | {entry['hits']} | {entry['code']} | {entry['category']} "
              f"| {message} | {', '.join(entry['examples'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
