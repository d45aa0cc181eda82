"""How many of the lines on which torch warns does torchpatch flag by default (and how many clean lines)?

Runs every file of bench/torch_warnings/ under the installed torch (CPU, every warning shown every time),
attributes each deprecation or behaviour-change warning to the innermost line of that file on the stack
(a warning raised inside torch, in ``Module.__call__`` say, belongs to the user's line that called it),
then lints the same files with the default selection and compares line sets:

    python bench/torch_warning_lines.py                 # recall on warning lines, false alarms on the others
    python bench/torch_warning_lines.py --show          # every line, with what torch and torchpatch said
    python bench/torch_warning_lines.py --python /tmp/t215/bin/python --glob 'name_*.py'   # another torch, some files

A file's construction line (``nn.Softmax()``) that torchpatch flags while torch warns on its call line
(``m(x)``) counts as found when the two lines are joined by a ``# warns below`` comment; none here needs it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "torch_warnings"
_CHANGE_WORDS = re.compile(r"deprecat|will be removed|will change|will be changed|has changed|no longer|"
                           r"in a future|will raise|not provided|was removed", re.I)
_CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}

_RUNNER = r'''
import json, sys, traceback, warnings, torch
path = sys.argv[1]
found = []
def show(message, category, filename, lineno, file=None, line=None):
    frames = [f for f in traceback.extract_stack() if f.filename == path]
    if frames:
        found.append({"line": frames[-1].lineno, "category": category.__name__, "message": str(message)[:300]})
warnings.simplefilter("always")
torch.set_warn_always(True)
getattr(torch.storage, "_set_always_warn_typed_storage_removal", lambda always: None)(True)
warnings.showwarning = show
error = None
try:
    exec(compile(open(path).read(), path, "exec"), {"__name__": "__main__"})
except BaseException as caught:
    error = f"{type(caught).__name__}: {caught}"[:300]
print(json.dumps({"warnings": found, "error": error}))
'''


def torch_lines(path: Path, python: str = sys.executable) -> tuple[dict[int, list[str]], str | None]:
    done = subprocess.run([python, "-c", _RUNNER, str(path)], capture_output=True, text=True, timeout=300)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    lines: dict[int, list[str]] = {}
    for warning in result["warnings"]:
        if warning["category"] in _CATEGORIES or _CHANGE_WORDS.search(warning["message"]):
            lines.setdefault(warning["line"], []).append(warning["message"])
    return lines, result["error"]


def torchpatch_lines(paths: list[Path]) -> dict[Path, dict[int, list[str]]]:
    done = subprocess.run([sys.executable, "-m", "torchpatch", "check", *map(str, paths), "--output-format", "json"],
                          capture_output=True, text=True)
    found: dict[Path, dict[int, list[str]]] = {}
    for item in json.loads(done.stdout):
        found.setdefault(Path(item["filename"]).resolve(), {}).setdefault(item["location"]["row"], []).append(
            item["code"])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose torch is the oracle")
    parser.add_argument("--glob", default="*.py", help="which corpus files (default: all)")
    args = parser.parse_args(argv)
    paths = sorted(CORPUS.glob(args.glob))
    flagged = torchpatch_lines(paths)
    warned_total = found = clean_total = false_alarms = 0
    for path in paths:
        warned, error = torch_lines(path, args.python)
        ours = flagged.get(path.resolve(), {})
        code_lines = [n for n, text in enumerate(path.read_text().splitlines(), 1)
                      if text.strip() and not text.lstrip().startswith(("import ", "from ", "#", "class ", "def "))]
        for number in code_lines:
            if number in warned:
                warned_total += 1
                found += number in ours
            else:
                clean_total += 1
                false_alarms += number in ours
            if args.show and (number in warned or number in ours):
                print(f"{path.name}:{number}: torch={'yes' if number in warned else 'no'} torchpatch={ours.get(number, [])}"
                      f" {warned.get(number, [''])[0][:80]!r}")
        if error:
            print(f"{path.name}: raised {error}", file=sys.stderr)
    print(f"warning lines flagged by default: {found}/{warned_total}; "
          f"false alarms on clean lines: {false_alarms}/{clean_total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
