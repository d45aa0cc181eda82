#!/usr/bin/env python3
"""Benchmark ``torchpatch check`` against TorchFix and a bare ``ast.parse`` loop on real code.

The corpus is the Python sources of pinned releases of large PyTorch-using packages, downloaded from
PyPI as wheels (a wheel holds the ``.py`` files) into ``bench/.cache/packages`` (gitignored) and
unpacked once. Every tool runs over the *same* explicit file list, each in a fresh subprocess, and is
measured with ``os.wait4``: CPU time (user + sys, including any children the tool waits for), wall
time and peak RSS.

    python bench/run_bench.py                 # all packages, all tools
    python bench/run_bench.py --quick         # timm only
    python bench/run_bench.py --packages timm,lightning --tools ast,torchpatch --markdown
    python bench/run_bench.py --quick --profile   # also cProfile torchpatch, print the hotspots

Tools (``--tools``, comma-separated, default all):

* ``ast``        read + ``ast.parse`` every file, nothing kept (the floor a Python linter can reach)
* ``torchpatch`` ``python -m torchpatch check --exit-zero --output-format concise --isolated FILES``
                 with the interpreter running this script (torchpatch installed there, e.g. editable)
* ``torchfix``   ``torchfix -j 1 --select ALL FILES`` from a cached venv with ``torchfix==0.7.0``
                 (``-j 1``: single process, like torchpatch; TorchFix defaults to one job per core)
* ``libcst``     read + ``libcst.parse_module`` every file, from the TorchFix venv (TorchFix's floor)

Stdlib only; it installs TorchFix into its own venv (``bench/.cache/torchfix-venv``).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
PACKAGES_DIR = CACHE / "packages"
WHEELS_DIR = PACKAGES_DIR / "wheels"
SOURCES_DIR = PACKAGES_DIR / "src"
RESULTS_DIR = CACHE / "results"
TORCHFIX_VENV = CACHE / "torchfix-venv"
# Tools run as installed for users, with their bytecode cached: an environment that forbids writing
# .pyc files (PYTHONDONTWRITEBYTECODE) would charge every run for compiling the tool's own sources.
TOOL_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
TORCHFIX_REQUIREMENT = "torchfix==0.7.0"

#: Pinned releases (all exist on PyPI as pure-Python wheels).
PINNED = {
    "timm": "1.0.15",
    "diffusers": "0.32.2",
    "transformers": "4.48.0",
    "lightning": "2.5.0",
}
QUICK = ("timm",)
TOOLS = ("ast", "torchpatch", "torchfix", "libcst")

#: ``path:row:col: CODE message`` -- the concise/flake8 layout both linters print.
FINDING = re.compile(r"^(?P<path>[^\s+\-@].*?):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+) ")

# The bare-parse loops, run as ``python -c SCRIPT LISTFILE`` so that nothing of this script is loaded.
AST_LOOP = """\
import ast, sys, warnings
warnings.simplefilter("ignore")
errors = 0
for path in open(sys.argv[1], encoding="utf-8").read().splitlines():
    with open(path, "rb") as f:
        data = f.read()
    try:
        ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError):
        errors += 1
print(f"parse errors: {errors}", file=sys.stderr)
"""

LIBCST_LOOP = """\
import sys, libcst
errors = 0
for path in open(sys.argv[1], encoding="utf-8").read().splitlines():
    with open(path, "rb") as f:
        data = f.read()
    try:
        libcst.parse_module(data)
    except Exception:
        errors += 1
print(f"parse errors: {errors}", file=sys.stderr)
"""


# -- corpus -------------------------------------------------------------------------------------------

def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def fetch(name: str, version: str) -> Path:
    """Download (once) and unpack (once) the wheel of ``name==version``; return the unpacked folder."""
    target = SOURCES_DIR / f"{name}-{version}"
    marker = target / ".unpacked"
    if marker.exists():
        return target
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    prefix = name.replace("-", "_") + "-" + version + "-"
    wheels = [w for w in WHEELS_DIR.glob("*.whl") if w.name.lower().startswith(prefix.lower())]
    if not wheels:
        _log(f"downloading {name}=={version}")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--dest", str(WHEELS_DIR), f"{name}=={version}"], check=True)
        wheels = [w for w in WHEELS_DIR.glob("*.whl") if w.name.lower().startswith(prefix.lower())]
        if not wheels:
            sys.exit(f"run_bench: pip downloaded no wheel for {name}=={version}")
    if target.exists():
        shutil.rmtree(target)
    _log(f"unpacking {wheels[0].name}")
    with zipfile.ZipFile(wheels[0]) as archive:
        for member in archive.infolist():
            # Only the Python sources; skip .dist-info and data files.
            if member.filename.endswith(".py") and ".dist-info/" not in member.filename:
                archive.extract(member, target)
    marker.write_text(f"{name}=={version}\n")
    return target


def corpus_files(names: list[str]) -> list[Path]:
    """The sorted .py files of the chosen packages, relative to SOURCES_DIR (short command lines)."""
    files: list[Path] = []
    for name in names:
        root = fetch(name, PINNED[name])
        files.extend(sorted(p.relative_to(SOURCES_DIR) for p in root.rglob("*.py")))
    return files


def count_lines(files: list[Path]) -> int:
    total = 0
    for path in files:
        data = (SOURCES_DIR / path).read_bytes()
        total += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return total


# -- TorchFix venv ------------------------------------------------------------------------------------

def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def torchfix_venv() -> Path:
    marker = TORCHFIX_VENV / ".installed"
    if marker.exists() and marker.read_text().strip() == TORCHFIX_REQUIREMENT:
        return TORCHFIX_VENV
    _log(f"creating {TORCHFIX_VENV} with {TORCHFIX_REQUIREMENT}")
    if TORCHFIX_VENV.exists():
        shutil.rmtree(TORCHFIX_VENV)
    subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_VENV)], check=True)
    subprocess.run([str(_venv_python(TORCHFIX_VENV)), "-m", "pip", "install", "--quiet", TORCHFIX_REQUIREMENT],
                   check=True)
    marker.write_text(TORCHFIX_REQUIREMENT + "\n")
    return TORCHFIX_VENV


# -- measuring ----------------------------------------------------------------------------------------

@dataclass
class Measurement:
    tool: str
    command: str
    files: int
    lines: int
    wall: float
    cpu: float
    user: float
    system: float
    max_rss_mb: float
    returncode: int
    findings: int | None = None
    codes: Counter = field(default_factory=Counter)
    stderr_tail: str = ""
    errors: int = 0

    @property
    def lines_per_cpu_s(self) -> float:
        return self.lines / self.cpu if self.cpu else float("inf")

    @property
    def files_per_s(self) -> float:
        return self.files / self.cpu if self.cpu else float("inf")


def measure(tool: str, argv: list[str], files: list[Path], lines: int, out_dir: Path,
            count_findings: bool) -> Measurement:
    """Run argv in a fresh process (cwd SOURCES_DIR); CPU, wall and peak RSS from os.wait4."""
    stdout_path = out_dir / f"{tool}.stdout"
    stderr_path = out_dir / f"{tool}.stderr"
    words = ["<loop>" if "\n" in word else word for word in argv]
    shown = " ".join(words[:9]) + (f" ... ({len(words) - 9} more)" if len(words) > 9 else "")
    _log(f"running {tool}: {shown}")
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=SOURCES_DIR, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   env=TOOL_ENVIRONMENT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
    stderr_text = stderr_path.read_text(errors="replace")
    result = Measurement(
        tool=tool, command=shown, files=len(files), lines=lines, wall=wall,
        cpu=usage.ru_utime + usage.ru_stime, user=usage.ru_utime, system=usage.ru_stime,
        # ru_maxrss: kilobytes on Linux, bytes on macOS.
        max_rss_mb=usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024),
        returncode=process.returncode, stderr_tail="\n".join(stderr_text.splitlines()[-5:]),
    )
    if count_findings:
        with open(stdout_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                match = FINDING.match(line)
                if match:
                    result.codes[match.group("code")] += 1
        result.findings = sum(result.codes.values())
    if tool == "torchpatch":
        result.errors = sum(1 for line in stderr_text.splitlines() if line.startswith("torchpatch: "))
    else:
        match = re.search(r"parse errors: (\d+)", stderr_text)
        result.errors = int(match.group(1)) if match else 0
    _log(f"  {tool}: cpu {result.cpu:.2f}s wall {result.wall:.2f}s rss {result.max_rss_mb:.0f}MB "
         f"rc {result.returncode}" + (f" findings {result.findings}" if result.findings is not None else ""))
    if result.returncode not in (0, 1):
        _log(f"  {tool} exited {result.returncode}; stderr tail:\n{result.stderr_tail}")
    return result


def commands(tools: list[str], list_file: Path, files: list[Path], select_all: bool) -> dict[str, list[str]]:
    paths = [str(p) for p in files]
    argvs: dict[str, list[str]] = {}
    for tool in tools:
        if tool == "ast":
            argvs[tool] = [sys.executable, "-c", AST_LOOP, str(list_file)]
        elif tool == "torchpatch":
            # One cold process (no result cache, no pool): what the parser floor is compared with.
            argvs[tool] = [sys.executable, "-m", "torchpatch", "check", "--exit-zero", "--output-format", "concise",
                           "--isolated", "--no-cache", "-j", "1", *(["--select", "ALL"] if select_all else []), *paths]
        elif tool == "torchfix":
            venv = torchfix_venv()
            argvs[tool] = [str(venv / "bin" / "torchfix"), "-j", "1", "--select", "ALL", *paths]
        elif tool == "libcst":
            venv = torchfix_venv()
            argvs[tool] = [str(_venv_python(venv)), "-c", LIBCST_LOOP, str(list_file)]
    return argvs


# -- reporting ----------------------------------------------------------------------------------------

HEADER = ("tool", "files", "lines", "wall s", "CPU s", "files/CPU-s", "lines/CPU-s", "peak RSS MB",
          "CPU × ast.parse", "speed-up vs TorchFix", "findings", "not parsed")


def rows(results: list[Measurement]) -> list[tuple[str, ...]]:
    by_tool = {m.tool: m for m in results}
    base = by_tool.get("ast")
    torchfix = by_tool.get("torchfix")
    table = []
    for m in results:
        table.append((
            m.tool, str(m.files), f"{m.lines:,}", f"{m.wall:.2f}", f"{m.cpu:.2f}", f"{m.files_per_s:,.0f}",
            f"{m.lines_per_cpu_s:,.0f}", f"{m.max_rss_mb:.0f}",
            f"{m.cpu / base.cpu:.2f}" if base and base.cpu else "-",
            f"{torchfix.cpu / m.cpu:.1f}" if torchfix and m.cpu else "-",
            str(m.findings) if m.findings is not None else "-",
            str(m.errors),
        ))
    return table


def render_text(table: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *table]) for i in range(len(HEADER))]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(HEADER, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in table:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def render_markdown(table: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] + ["---:"] * (len(HEADER) - 1)) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in table)
    return "\n".join(lines)


def render_codes(results: list[Measurement], markdown: bool) -> str:
    linters = [m for m in results if m.findings is not None]
    if not linters:
        return ""
    out = []
    for m in linters:
        counts = ", ".join(f"{code} {n}" for code, n in sorted(m.codes.items()))
        out.append(f"{'- ' if markdown else ''}{m.tool} findings by code: {counts or 'none'}")
    return "\n".join(out)


def corpus_line(names: list[str], files: list[Path], lines: int) -> str:
    per_package = Counter(p.parts[0] for p in files)
    packages = ", ".join(f"{name}=={PINNED[name]} ({per_package[f'{name}-{PINNED[name]}']} files)" for name in names)
    return f"corpus: {packages}; {len(files)} files, {lines:,} lines"


def torchpatch_line() -> str:
    """The torchpatch measured: its version and the repository commit (``+dirty`` with local changes)."""
    repo = BENCH.parent
    try:
        version = subprocess.run([sys.executable, "-m", "torchpatch", "--version"], capture_output=True,
                                 text=True, timeout=60).stdout.strip() or "torchpatch (version unknown)"
    except (OSError, subprocess.SubprocessError):
        version = "torchpatch (not runnable)"
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no", "--", "src"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", ""
    return f"{version}" + (f" at commit {commit}{'+dirty src/' if dirty else ''}" if commit else "")


def machine_line() -> str:
    return (f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; load average before the run: "
            + " ".join(f"{x:.1f}" for x in os.getloadavg()))


# -- profiling ----------------------------------------------------------------------------------------

def profile_torchpatch(files: list[Path], out_dir: Path, top: int, select_all: bool) -> str:
    """cProfile one torchpatch run over the corpus; return the top functions by cumulative time."""
    stats_path = out_dir / "torchpatch.pstats"
    argv = [sys.executable, "-m", "cProfile", "-o", str(stats_path), "-m", "torchpatch", "check", "--exit-zero",
            "--output-format", "concise", "--isolated", "--no-cache", "-j", "1", *(["--select", "ALL"] if select_all else []),
            *[str(p) for p in files]]
    _log("profiling torchpatch (cProfile)")
    subprocess.run(argv, cwd=SOURCES_DIR, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    import io
    import pstats

    text = io.StringIO()
    stats = pstats.Stats(str(stats_path), stream=text)
    stats.sort_stats("cumulative").print_stats(top)
    text.write("\n--- by own time (tottime) ---\n")
    stats.sort_stats("tottime").print_stats(top)
    return text.getvalue()


# -- main ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", help=f"comma-separated, from: {', '.join(PINNED)} (default: all)")
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from: {', '.join(TOOLS)} (default: all)")
    parser.add_argument("--select-all", action="store_true",
                        help="run torchpatch with --select ALL (opt-in rules too), like TorchFix's --select ALL")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per tool; the one with the least CPU time is reported (default 1)")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (for the README)")
    parser.add_argument("--profile", action="store_true", help="also cProfile torchpatch and print the hotspots")
    parser.add_argument("--profile-top", type=int, default=30, help="functions to list with --profile")
    args = parser.parse_args(argv)

    if args.quick:
        names = list(QUICK)
    elif args.packages:
        names = [n.strip() for n in args.packages.split(",") if n.strip()]
    else:
        names = list(PINNED)
    unknown = [n for n in names if n not in PINNED]
    if unknown:
        parser.error(f"unknown package(s): {', '.join(unknown)}; known: {', '.join(PINNED)}")
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        parser.error(f"unknown tool(s): {', '.join(bad)}; known: {', '.join(TOOLS)}")

    files = corpus_files(names)
    lines = count_lines(files)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out_dir = RESULTS_DIR / stamp
    out_dir.mkdir(parents=True, exist_ok=True)
    list_file = out_dir / "files.txt"
    list_file.write_text("".join(f"{p}\n" for p in files), encoding="utf-8")
    header = [corpus_line(names, files, lines), torchpatch_line(), machine_line(),
              f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    _log(header[0])

    results: list[Measurement] = []
    for tool, command in commands(tools, list_file, files, args.select_all).items():
        best = None
        for _ in range(max(1, args.repeat)):
            m = measure(tool, command, files, lines, out_dir, count_findings=tool in ("torchpatch", "torchfix"))
            if best is None or m.cpu < best.cpu:
                best = m
        results.append(best)

    table = rows(results)
    render = render_markdown if args.markdown else render_text
    print("\n".join(header))
    print()
    print(render(table))
    print()
    codes = render_codes(results, args.markdown)
    if codes:
        print(codes)
    by_tool = {m.tool: m for m in results}
    if "ast" in by_tool and "torchpatch" in by_tool:
        ratio = by_tool["torchpatch"].cpu / by_tool["ast"].cpu
        verdict = "meets" if ratio <= 2.0 else "misses"
        print(f"torchpatch CPU time = {ratio:.2f} × bare ast.parse: {verdict} the 2× target")
    print(f"raw output: {out_dir}")
    (out_dir / ("table.md" if args.markdown else "table.txt")).write_text(
        "\n".join(header) + "\n\n" + render(table) + "\n\n" + codes + "\n", encoding="utf-8")

    if args.profile:
        report = profile_torchpatch(files, out_dir, args.profile_top, args.select_all)
        (out_dir / "torchpatch.profile.txt").write_text(report, encoding="utf-8")
        print()
        print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
