#!/usr/bin/env python3
"""Where the CPU time of a cold single-process check goes, phase by phase, on the speed corpus.

    python bench/cold_phases.py                  # whole corpus of run_bench.py
    python bench/cold_phases.py --packages timm
    python bench/cold_phases.py ~/src/detectron2 ~/src/fairseq     # folders, through torchpatch's discovery

One in-process ``torchpatch check --no-cache -j 1`` run (the command of ``cache_jobs_bench.py --cold-only``),
with the engine's phases wrapped in CPU timers (``time.process_time``): start-up (imports, configuration,
discovery), reading and decoding, ``ast.parse``, the scope tree (pass 1, its guard classification
counted apart), the candidate rows, the walker (rules included), and the rest (results, output). A
phase's time excludes the phases nested in it. The timers cost a little themselves; the sum is checked
against the process's CPU time. Stdlib only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench  # noqa: E402  (the corpus and its pins live there)

_clock = time.process_time
_spent: dict[str, float] = defaultdict(float)
_stack: list[list] = []  # [phase, start, time of nested phases]


def _timed(phase: str, function):
    def wrapper(*args, **kwargs):
        start = _clock()
        _stack.append([phase, start, 0.0])
        try:
            return function(*args, **kwargs)
        finally:
            _, began, nested = _stack.pop()
            elapsed = _clock() - began
            _spent[phase] += elapsed - nested
            if _stack:
                _stack[-1][2] += elapsed
    wrapper.__wrapped__ = function
    return wrapper


def _instrument() -> None:
    from torchpatch.engine import candidates, checker, guards, linter, resolve, source

    linter.parse_text = _timed("ast.parse", linter.parse_text)
    linter.read_source = _timed("read + decode", linter.read_source)
    linter.check_tree = _timed("check_tree (rest)", linter.check_tree)
    linter.lint_text = _timed("lint_text (rest: freeing the tree, sorting)", linter.lint_text)
    linter._attach_import_removals = _timed("import removals of fixes", linter._attach_import_removals)
    linter.withhold_unparsable_fixes = _timed("fixes that would not parse (their parses)", linter.withhold_unparsable_fixes)
    linter.unsuppressed = _timed("noqa", linter.unsuppressed)
    linter.check_source = _timed("check_source (rest)", linter.check_source)
    linter.check_file = _timed("check_file (rest)", linter.check_file)
    checker.Context.parent_of = _timed("rules: parent links", checker.Context.parent_of)
    checker.ScopeTree = _timed("scope tree (pass 1)", checker.ScopeTree)
    resolve.old_branch = _timed("guards: if tests (pass 1)", resolve.old_branch)
    resolve.module_definitions = _timed("guards: module definitions", resolve.module_definitions)
    checker._candidate_rows = _timed("candidate rows", checker._candidate_rows)
    checker.nothing_to_walk = _timed("nothing_to_walk (skip test, candidate rows)", checker.nothing_to_walk)
    linter.nothing_to_check = _timed("text-only skip test (files not parsed into a tree)", linter.nothing_to_check)
    linter.symtable_accepts = _timed("symtable (files not parsed into a tree)", linter.symtable_accepts)
    checker._Walker.run = _timed("walker + rules", checker._Walker.run)
    from torchpatch.frontends import check
    check.discover = _timed("discovery", check.discover)
    linter._place = _timed("placing findings", linter._place)
    del candidates, guards, source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", help=f"comma-separated, from: {', '.join(run_bench.PINNED)} (default: all)")
    parser.add_argument("--select", help="passed to --select (default: the default rules)")
    parser.add_argument("trees", nargs="*", type=Path, help="folders to check instead of the corpus (not --isolated)")
    args = parser.parse_args(argv)
    import os
    if args.trees:
        names, files = [], [str(tree.resolve()) for tree in args.trees]
    else:
        names = [n.strip() for n in args.packages.split(",")] if args.packages else list(run_bench.PINNED)
        files = [str(p) for p in run_bench.corpus_files(names)]
    begin = _clock()
    if not args.trees:
        os.chdir(run_bench.SOURCES_DIR)
    from torchpatch.frontends.cli import main as cli_main
    imported = _clock()
    _instrument()
    command = ["check", "--exit-zero", "--output-format", "concise", *([] if args.trees else ["--isolated"]),
               "--no-cache", "-j", "1",
               *(["--select", args.select] if args.select else []), *files]
    with contextlib.redirect_stdout(io.StringIO()):
        _stack.append(["rest (CLI, discovery, results, output)", _clock(), 0.0])
        cli_main(command)
        phase, began, nested = _stack.pop()
        _spent[phase] += _clock() - began - nested
    total = _clock() - begin
    _spent["imports of torchpatch.frontends.cli"] = imported - begin
    if names:
        print(run_bench.corpus_line(names, [Path(f) for f in files], run_bench.count_lines([Path(f) for f in files])))
    else:
        print(f"trees: {', '.join(files)}")
    print(f"CPU s of this process after the interpreter started: {total:.2f}")
    print()
    print("| phase | CPU s | share |")
    print("|---|---:|---:|")
    for phase, seconds in sorted(_spent.items(), key=lambda item: -item[1]):
        print(f"| {phase} | {seconds:.2f} | {seconds / total:.0%} |")
    print(f"| (sum) | {sum(_spent.values()):.2f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
