"""TorchFix's own checker fixtures, run through torchpatch: which expected TorchFix findings we report.

    python bench/torchfix_fixtures.py [--fixtures /path/to/TorchFix/tests/fixtures] [--verbose]

Each fixture `X.py` has `X.txt` with TorchFix's expected findings (`row:col TORnnn message`). A finding
counts as reported when torchpatch, with every TorchFix code selected (``--select TOR…`` maps to our
rules), reports one of the rules that answer that TorchFix code on the same row. Misses are listed with
the reason recorded in MISS_REASONS when there is one. Also used by tests/test_torchfix_fixtures.py.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

DEFAULT_FIXTURES = Path(os.environ.get("TORCHFIX_FIXTURES", "/work/realcode/torchfix/tests/fixtures"))
_EXPECTED = re.compile(r"^(\d+):(\d+) (TOR\d+) ")

#: (fixture stem, row, TorchFix code) → why torchpatch reports nothing there, by design.
MISS_REASONS: dict[tuple[str, int, str], str] = {
    ("deprecated_qr", 9, "TOR103"): "reported at the use on row 10: importing torch.qr does not warn, calling it does",
    ("deprecated_qr", 13, "TOR103"): "`old_qr` is imported and never called: importing torch.qr does not warn",
    ("deprecated_register_pytree_node", 1, "TOR103"): "reported at the use on row 3 (the import does not warn)",
    ("sdp_kernel", 3, "TOR103"): "reported at the uses on rows 5, 8 and 11 (the import does not warn)",
    ("removed_symeig", 5, "TOR001"): "reported once, at the import of the alias on row 2 (its uses follow it)",
    ("default_collate_convert", 5, "TOR104"): "reported once, at the import on row 4 (where the fix applies)",
    ("default_collate_convert", 8, "TOR104"): "reported once, at the import on row 7 (where the fix applies)",
    ("dataloader", 5, "TOR401"): "an explicit num_workers=0 is a decision, not an oversight (TP500's docs)",
    ("dataloader", 6, "TOR401"): "an explicit num_workers=0 (by position) is a decision, not an oversight",
    ("scoped_library", 3, "TOR901"): "TorchFix-internal rule for PyTorch's own test suite",
}


def expected_findings(fixtures: Path) -> list[tuple[Path, int, str]]:
    found = []
    for expected in sorted(fixtures.glob("**/checker/*.txt")):
        source = expected.with_suffix(".py")
        if not source.exists():
            continue
        for line in expected.read_text().splitlines():
            match = _EXPECTED.match(line)
            if match:
                found.append((source, int(match.group(1)), match.group(3)))
    return found


def compare(fixtures: Path = DEFAULT_FIXTURES) -> tuple[list, list]:
    """(reported, missed): lists of (fixture path, row, TorchFix code)."""
    from torchpatch.engine.linter import check_file
    from torchpatch.engine.settings import Settings, torchfix_redirects
    from torchpatch.versions import NEWEST_KNOWN

    redirects = torchfix_redirects()
    expected = expected_findings(fixtures)
    codes = sorted({code for _, _, code in expected})
    settings = Settings()
    settings.select = [code for code in codes if code in redirects] or ["TP"]
    settings.target = NEWEST_KNOWN
    results = {}
    reported, missed = [], []
    for path, row, code in expected:
        if path not in results:
            results[path] = check_file(path, settings)
        ours = redirects.get(code, ())
        if any(f.code in ours and f.row == row for f in results[path].findings):
            reported.append((path, row, code))
        else:
            missed.append((path, row, code))
    return reported, missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if not args.fixtures.is_dir():
        print(f"error: no TorchFix fixtures at {args.fixtures}", file=sys.stderr)
        return 2
    reported, missed = compare(args.fixtures)
    total = len(reported) + len(missed)
    print(f"TorchFix fixture findings reported: {len(reported)} of {total}")
    for path, row, code in missed:
        reason = MISS_REASONS.get((path.stem, row, code), "")
        if args.verbose or not reason:
            print(f"  missed {path.relative_to(args.fixtures)}:{row} {code} {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
