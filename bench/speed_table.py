#!/usr/bin/env python3
"""The speed table of issue 27 in one command, on the trees you pass, every ratio measured in one sitting.

    python bench/speed_table.py ~/src/detectron2 ~/src/fairseq ~/src/DeepSpeed ~/src/accelerate ~/src/pytorch_geometric
    python bench/speed_table.py --repeat 5 --one-file ~/src/detectron2/detectron2/structures/rotated_boxes.py TREE

Each row is a fresh process measured with ``os.wait4`` (wall time; CPU time of the process and of the workers it
waited for), run ``--repeat`` times, the two sides of a ratio one after the other so both see the same load,
the least of each side kept (on a shared machine the least is the run other jobs slowed least):

* cold ``check -j 1 --no-cache`` against a bare ``ast.parse`` loop over the same trees' Python files (CPU);
  for all the trees together and for the first one alone;
* the default ``check`` (jobs chosen automatically, a fresh cache) on the first tree, CPU of all processes,
  against the bare loop;
* ``check`` of one file (``--one-file``; by default the first tree's Python file closest to 527 lines)
  against ``python -c "import ast; ast.parse(...)"``, wall time;
* ``-j 2`` against ``-j 1`` (``--no-cache``), wall time, all the trees together;
* a warm rerun (the default ``check`` with the cache the previous run filled) against the cold default run, CPU,
  on the first tree.

The machine, the commit and the load are printed above the table. ``--instructions`` adds the instructions
(``valgrind --tool=callgrind``, ``PYTHONHASHSEED=0``) of the first tree's cold, cache-writing and warm runs
(``-j 1``) and of the one-file check against their floors: counts that other jobs on the machine do not move
(slow: about fifty times the run). Needs only the standard library and torchpatch (and valgrind for that).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench  # noqa: E402  (the commit and machine lines, the bare-parse loop)

#: Folders torchpatch's discovery leaves out by default, left out of the bare loop too.
from torchpatch.engine.discover import DEFAULT_EXCLUDE  # noqa: E402


@dataclass
class Timing:
    wall: float
    cpu: float


def timed(argv: list[str], cwd: Path) -> Timing:
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=sink, stdin=subprocess.DEVNULL,
                                   env=run_bench.TOOL_ENVIRONMENT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:6])} ... exited {os.waitstatus_to_exitcode(status)}")
    return Timing(wall, usage.ru_utime + usage.ru_stime)


def python_files(tree: Path) -> list[Path]:
    found = []
    for folder, subfolders, names in os.walk(tree):
        subfolders[:] = sorted(name for name in subfolders if name not in DEFAULT_EXCLUDE)
        found.extend(Path(folder) / name for name in sorted(names) if name.endswith(".py"))
    return found


def lines_of(files: list[Path]) -> int:
    return sum(path.read_bytes().count(b"\n") for path in files)


def least_pair(repeat: int, first: tuple[list[str], Path], second: tuple[list[str], Path], before=None):
    """Both commands ``repeat`` times, alternately; the least wall and the least CPU of each."""
    ones, twos = [], []
    for _ in range(repeat):
        if before:
            before()
        ones.append(timed(*first))
        if before:
            before()
        twos.append(timed(*second))
    pick = lambda runs: Timing(min(r.wall for r in runs), min(r.cpu for r in runs))  # noqa: E731
    return pick(ones), pick(twos)


def nearest_file(files: list[Path], lines: int) -> Path:
    return min(files, key=lambda path: (abs(path.read_bytes().count(b"\n") - lines), str(path)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="folders to check (the first is also measured alone)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side of each ratio (default 3)")
    parser.add_argument("--one-file", type=Path, help="the file of the one-file row")
    parser.add_argument("--one-file-repeat", type=int, default=10)
    parser.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    args = parser.parse_args(argv)
    trees = [tree.resolve() for tree in args.trees]
    for tree in trees:
        if not tree.is_dir():
            print(f"{tree}: not a folder", file=sys.stderr)
            return 2
    cwd = Path(os.path.commonpath([str(t) for t in trees]))
    cwd = cwd if cwd.is_dir() and len(trees) > 1 else trees[0].parent
    work = Path(tempfile.mkdtemp(prefix="torchpatch-speed-"))
    every_file = {tree: python_files(tree) for tree in trees}
    all_files = [path for tree in trees for path in every_file[tree]]
    first = trees[0]
    lists = {}
    for name, files in (("all", all_files), ("first", every_file[first])):
        lists[name] = work / f"{name}.txt"
        lists[name].write_text("".join(f"{p}\n" for p in files), encoding="utf-8")
    one_file = (args.one_file or nearest_file(every_file[first], 527)).resolve()

    python = sys.executable
    check = [python, "-m", "torchpatch", "check", "--exit-zero", "--output-format", "concise"]
    bare = lambda name: ([python, "-c", run_bench.AST_LOOP, str(lists[name])], cwd)  # noqa: E731
    cache_dir = work / "cache"
    fresh_cache = lambda: shutil.rmtree(cache_dir, ignore_errors=True)  # noqa: E731
    tree_args = [str(t) for t in trees]

    print(f"trees: {', '.join(f'{t.name} ({len(every_file[t])} files)' for t in trees)}; "
          f"{len(all_files)} Python files, {lines_of(all_files):,} lines; the first alone: {lines_of(every_file[first]):,} lines")
    print(run_bench.torchpatch_line())
    print(run_bench.machine_line())
    print(f"each side least of {args.repeat} (one file: {args.one_file_repeat}), both sides alternately")
    print()
    rows = []

    def row(work_done: str, ours: float, floor: float, floor_name: str, unit: str, goal: str, ratio_ok) -> None:
        ratio = ours / floor
        rows.append((work_done, f"{ours:.2f} {unit}", f"{floor_name} {floor:.2f} {unit}", f"**{ratio:.2f}×**", goal,
                     "met" if ratio_ok(ratio) else "not met"))
        print(f"[speed] {work_done}: {ratio:.2f}×", file=sys.stderr, flush=True)

    floor, cold = least_pair(args.repeat, bare("all"), ([*check, "-j", "1", "--no-cache", *tree_args], cwd))
    row(f"cold `check -j 1 --no-cache`, all {len(trees)} trees", cold.cpu, floor.cpu, "bare `ast.parse`", "CPU-s",
        "≤ 1.3×", lambda r: r <= 1.3)
    floor_first, cold_first = least_pair(args.repeat, bare("first"),
                                         ([*check, "-j", "1", "--no-cache", str(first)], cwd))
    row(f"the same, {first.name} alone", cold_first.cpu, floor_first.cpu, "bare `ast.parse`", "CPU-s", "≤ 1.4×",
        lambda r: r <= 1.4)
    default_command = ([*check, "--cache-dir", str(cache_dir), str(first)], cwd)
    floor_first2, default = least_pair(args.repeat, bare("first"), default_command, before=fresh_cache)
    row(f"default `check` (jobs chosen, fresh cache) on {first.name}, CPU of all processes", default.cpu,
        floor_first2.cpu, "bare `ast.parse`", "CPU-s", "≤ 1.5×", lambda r: r <= 1.5)
    parse_one = ([python, "-c", f"import ast; ast.parse(open({str(one_file)!r}, 'rb').read())"], cwd)
    floor_one, one = least_pair(args.one_file_repeat, parse_one, ([*check, "--no-cache", str(one_file)], cwd))
    one_lines = one_file.read_bytes().count(b"\n")
    row(f"`check` of one file ({one_file.name}, {one_lines} lines)", one.wall * 1000,
        floor_one.wall * 1000, '`python -c "ast.parse(...)"`', "ms wall", "≤ 3×", lambda r: r <= 3)
    single, double = least_pair(args.repeat, ([*check, "-j", "1", "--no-cache", *tree_args], cwd),
                                ([*check, "-j", "2", "--no-cache", *tree_args], cwd))
    rows.append((f"`-j 2` vs `-j 1`, all {len(trees)} trees (wall)", f"{double.wall:.2f} s", f"-j 1 {single.wall:.2f} s",
                 f"**{single.wall / double.wall:.2f}×** faster", "≥ 1.7×",
                 "met" if single.wall / double.wall >= 1.7 else "not met"))
    colds, warms = [], []
    for _ in range(args.repeat):
        fresh_cache()
        colds.append(timed(*default_command))
        warms.append(timed(*default_command))
    cold_cpu, warm_cpu = min(t.cpu for t in colds), min(t.cpu for t in warms)
    rows.append((f"warm rerun on {first.name}", f"{warm_cpu:.3f} CPU-s", f"cold default run {cold_cpu:.2f} CPU-s",
                 f"**{warm_cpu / cold_cpu:.1%}**", "≤ 10 %", "met" if warm_cpu / cold_cpu <= 0.10 else "not met"))
    counted = instruction_rows(first, lists["first"], one_file, check, cache_dir, cwd) if args.instructions else []
    shutil.rmtree(work, ignore_errors=True)

    print("| work | torchpatch | floor / peer | ratio | goal | |")
    print("|---|---|---|---|---|---|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    if counted:
        print()
        print("| instructions (callgrind) | torchpatch | floor | ratio |")
        print("|---|---:|---:|---:|")
        for cells in counted:
            print("| " + " | ".join(cells) + " |")
    return 0


def instructions(argv: list[str], cwd: Path) -> int:
    """What ``argv`` executes, counted by callgrind (the hash seed fixed, so two runs count alike)."""
    environment = {**run_bench.TOOL_ENVIRONMENT, "PYTHONHASHSEED": "0"}
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], cwd=cwd,
                          env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"callgrind counted nothing for {' '.join(argv[:6])} ...")


def instruction_rows(first: Path, first_list: Path, one_file: Path, check: list[str], cache_dir: Path,
                     cwd: Path) -> list[tuple[str, ...]]:
    python = sys.executable
    floor = instructions([python, "-c", run_bench.AST_LOOP, str(first_list)], cwd)
    cold = instructions([*check, "-j", "1", "--no-cache", str(first)], cwd)
    shutil.rmtree(cache_dir, ignore_errors=True)
    writing = instructions([*check, "-j", "1", "--cache-dir", str(cache_dir), str(first)], cwd)
    warm = instructions([*check, "-j", "1", "--cache-dir", str(cache_dir), str(first)], cwd)
    subprocess.run([*check, "--no-cache", str(one_file)], cwd=cwd, stdout=subprocess.DEVNULL,
                   env=run_bench.TOOL_ENVIRONMENT)  # bytecode written before it is counted
    parse_floor = instructions([python, "-c", f"import ast; ast.parse(open({str(one_file)!r}, 'rb').read())"], cwd)
    one = instructions([*check, "--no-cache", str(one_file)], cwd)
    giga = lambda count: f"{count / 1e9:.3f} G"  # noqa: E731
    return [(f"cold `check -j 1 --no-cache`, {first.name}", giga(cold), giga(floor), f"**{cold / floor:.2f}×**"),
            (f"cold `check -j 1`, cache written, {first.name}", giga(writing), giga(floor), f"**{writing / floor:.2f}×**"),
            (f"warm rerun, {first.name} (floor: the run that wrote the cache)", giga(warm), giga(writing),
             f"**{warm / writing:.1%}**"),
            (f"one file ({one_file.name})", giga(one), giga(parse_floor), f"**{one / parse_floor:.2f}×**")]


if __name__ == "__main__":
    sys.exit(main())
