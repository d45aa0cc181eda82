"""Compare torchpatch audit with picklescan, modelscan and fickling on the generated corpus."""

# Usage: python bench/audit_bench.py [--speed] [--peers] [--corpus]   (default: all three;
# needs torch, numpy and safetensors to build the corpus)
#   --speed   a 20,000-tensor state dict audited side by side with torch.load(weights_only=True,
#             mmap=True), and a 2M-opcode pickle (medians of 3, CPU and wall seconds)
#   --peers   picklescan's, modelscan's and fickling's own sample folders when present
#             (TORCHPATCH_PEER_SAMPLES, colon-separated, else /work/realcode/<tool>/tests/...):
#             out-of-sample catch rates of every tool
#   --corpus  the generated corpus (tests/audit/make_corpus.py), every tool's CLI once per file
# The other tools are pip-installed into bench/.cache/venv (gitignored). Each tool runs as its CLI,
# once per file, the way a CI job would: a file is flagged when the exit code says "found
# something", an error when the tool fails or skips it. Results: a Markdown table on stdout and
# bench/.cache/results.json.

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
VENV = CACHE / "venv"
sys.path.insert(0, str(ROOT / "tests" / "audit"))

from make_corpus import generate, torch_decisions

TOOLS_PACKAGES = ["picklescan", "modelscan", "fickling", "typing_extensions"]


def tool_venv() -> Path:
    bin_dir = VENV / "bin"
    if not (bin_dir / "picklescan").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", *TOOLS_PACKAGES], check=True)
    return bin_dir


def tools(bin_dir: Path) -> dict[str, tuple[list[str], dict[int, str]]]:
    """name: (command prefix, exit code -> outcome)."""
    return {
        "picklescan": ([str(bin_dir / "picklescan"), "-p"], {0: "clean", 1: "flagged"}),
        "picklescan --strict": ([str(bin_dir / "picklescan"), "--strict", "-p"], {0: "clean", 1: "flagged"}),
        "modelscan": ([str(bin_dir / "modelscan"), "-p"], {0: "clean", 1: "flagged"}),
        "fickling --check-safety": ([str(bin_dir / "fickling"), "--check-safety"], {0: "clean", 1: "flagged"}),
        "torchpatch audit": ([sys.executable, "-m", "torchpatch", "audit", "--torch-version", "2.13"],
                             {0: "clean", 1: "clean", 3: "flagged"}),
    }


def run_tool(command: list[str], outcomes: dict[int, str], path: str) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        # fickling appends to ./safety_results.json, so every tool runs inside the cache folder.
        done = subprocess.run([*command, path], check=False, capture_output=True, text=True, timeout=120, cwd=CACHE,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        outcome = outcomes.get(done.returncode, "error")
        if command[-1] == "2.13" and done.returncode == 3 and "unreadable" in done.stdout.split("\n", 1)[0]:
            outcome = "error"
    except subprocess.TimeoutExpired:
        outcome = "error"
    return outcome, time.perf_counter() - start


# torch's own answers, one throwaway process per helper (payloads are harmless and weights_only
# never calls a non-allowlisted global): get_unsafe_globals_in_checkpoint non-empty = flagged,
# raising = error; torch.load(weights_only=True) refusing = flagged.
TORCH_BASELINE = r'''
import json, sys, time, warnings
import torch
warnings.simplefilter("ignore")
mode = sys.argv[1]
for path in sys.argv[2:]:
    start = time.perf_counter()
    try:
        if mode == "unsafe-globals":
            outcome = "flagged" if torch.serialization.get_unsafe_globals_in_checkpoint(path) else "clean"
        else:
            torch.load(path, weights_only=True)
            outcome = "clean"
    except Exception:
        outcome = "error" if mode == "unsafe-globals" else "flagged"
    print(json.dumps([path, outcome, time.perf_counter() - start]))
'''


def torch_baselines(paths: list[str]) -> dict[str, dict[str, tuple[str, float]]]:
    out = {}
    for tool, mode in (("torch get_unsafe_globals_in_checkpoint", "unsafe-globals"), ("torch.load(weights_only=True), reject = flag", "load")):
        done = subprocess.run([sys.executable, "-c", TORCH_BASELINE, mode, *paths], check=False, capture_output=True, text=True, timeout=900, cwd=CACHE)
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
        out[tool] = {Path(path).name: (outcome, seconds) for path, outcome, seconds in rows}
    return out


def fickling_injections(bin_dir: Path, folder: Path) -> dict[str, str]:
    """Payloads crafted by another tool: fickling --inject into benign pickles and legacy checkpoints."""
    from torchpatch.audit.auditor import audit_path
    from torchpatch.versions import Version

    out_dir = CACHE / "fickling-injected"
    out_dir.mkdir(parents=True, exist_ok=True)
    verdicts = {}
    sources = [p for p in sorted(folder.iterdir()) if p.name in ("ok_legacy.pt", "dead_plain_tensor.pkl")]
    variants = {"first": [], "last": ["--run-last"], "replace": ["--replace-result"]}
    for source in sources:
        targets = ["0", "3"] if source.name == "ok_legacy.pt" else ["0"]
        for variant, flags in variants.items():
            for target in targets:
                name = f"{source.stem}-{variant}-pickle{target}{source.suffix}"
                with open(out_dir / name, "wb") as handle:
                    done = subprocess.run([str(bin_dir / "fickling"), "--inject", "print('fickling-injected')", "--inject-target", target, *flags, str(source)],
                                          check=False, stdout=handle, stderr=subprocess.DEVNULL, cwd=CACHE)
                if done.returncode == 0 and (out_dir / name).stat().st_size:
                    verdicts[name] = audit_path(str(out_dir / name), Version(2, 13)).verdict
    return verdicts


def in_process_timings(labels: dict, folder: Path) -> dict[str, float]:
    from torchpatch.audit.auditor import audit_path
    from torchpatch.versions import Version

    times = []
    agree = 0
    for name, label in labels.items():
        start = time.perf_counter()
        report = audit_path(str(folder / name), Version(2, 13))
        times.append(time.perf_counter() - start)
        agree += report.weights_only == label["torch_2_13"]
    huge = folder / "sparse-6GiB.pt"
    if not huge.exists():
        import pickle

        from make_corpus import legacy

        with open(huge, "wb") as handle:
            handle.write(legacy(pickle.dumps({"w": list(range(10))}, protocol=2)))
            handle.truncate(6 << 30)
    start = time.perf_counter()
    audit_path(str(huge), Version(2, 13))
    huge_ms = (time.perf_counter() - start) * 1000
    huge.unlink()
    return {"median_ms": statistics.median(times) * 1000, "max_ms": max(times) * 1000,
            "weights_only_agreement": agree / len(labels), "sparse_6GiB_ms": huge_ms}


def _median_run(function, repeat: int = 3) -> tuple[float, float]:
    """(median CPU seconds, median wall seconds) of ``function()``."""
    cpu, wall = [], []
    for _ in range(repeat):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        function()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    return statistics.median(cpu), statistics.median(wall)


# torch's side, timed in its own process so its imports do not count: torch.load with mmap=True
# (tensor data is not read, as the audit does not read it).
TORCH_LOAD_TIMING = r'''
import json, statistics, sys, time, warnings
import torch
warnings.simplefilter("ignore")
cpu, wall = [], []
for _ in range(3):
    c, w = time.process_time(), time.perf_counter()
    torch.load(sys.argv[1], weights_only=True, mmap=True)
    cpu.append(time.process_time() - c)
    wall.append(time.perf_counter() - w)
print(json.dumps([statistics.median(cpu), statistics.median(wall)]))
'''


def speed() -> dict:
    import pickle

    from torchpatch.audit.auditor import audit_path
    from torchpatch.versions import Version

    CACHE.mkdir(parents=True, exist_ok=True)
    state_dict = CACHE / "state-dict-20000.pt"
    if not state_dict.exists():
        subprocess.run([sys.executable, "-c", "import sys, torch; torch.save({f'layer{i}.weight': torch.zeros(2) for i in range(20000)}, sys.argv[1])",
                        str(state_dict)], check=True)
    done = subprocess.run([sys.executable, "-c", TORCH_LOAD_TIMING, str(state_dict)], check=True, capture_output=True, text=True)
    torch_cpu, torch_wall = json.loads(done.stdout.strip().splitlines()[-1])
    audit_cpu, audit_wall = _median_run(lambda: audit_path(str(state_dict), Version(2, 13)))
    opcodes = CACHE / "opcodes-2M.pkl"
    if not opcodes.exists():
        opcodes.write_bytes(pickle.dumps(list(range(2_000_000)), protocol=2))  # 2,000,004 opcodes
    big_cpu, big_wall = _median_run(lambda: audit_path(str(opcodes), Version(2, 13)))
    result = {"state_dict_20000": {"torch_load_mmap": [torch_cpu, torch_wall], "audit": [audit_cpu, audit_wall],
                                   "speedup_cpu": torch_cpu / audit_cpu, "speedup_wall": torch_wall / audit_wall},
              "pickle_2M_opcodes": {"audit": [big_cpu, big_wall]}}
    print(f"20,000-tensor state dict: torch.load(weights_only=True, mmap=True) {torch_cpu:.2f} CPU-s ({torch_wall:.2f} s wall), "
          f"torchpatch audit {audit_cpu:.2f} CPU-s ({audit_wall:.2f} s wall): {torch_cpu / audit_cpu:.1f}x faster (CPU), "
          f"{torch_wall / audit_wall:.1f}x (wall)")
    print(f"2M-opcode pickle: torchpatch audit {big_cpu:.2f} CPU-s ({big_wall:.2f} s wall)")
    return result


# Each sample's label, from the peer's own test expectations: every file their tests call
# malicious, dangerous or an exploit is malicious; the rest are benign (including pickles that
# only call pickle.loads on a benign literal, which picklescan flags and torchpatch audits).
PEER_MALICIOUS_NAMES = frozenset("""
    broken_model.pkl cloudpickle_codeinjection.pkl dns_exfiltration.npy io_FileIO.pkl keyerror-exploit.pkl
    logging_FileHandler.pkl type-confusion-exploit.pkl types_CodeType.pkl urllib_request_urlopen.pkl
    pytorch_magic_bypass.pt sys_module_override_sploit.pkl unsafe_zip_pytorch.pt
""".split())
PEER_NESTED_BENIGN = frozenset({"malicious13a.pkl", "malicious13b.pkl"})
DEFAULT_PEER_FOLDERS = ("/work/realcode/picklescan/tests/data", "/work/realcode/picklescan/tests/data2",
                        "/work/realcode/modelscan/tests/data", "/work/realcode/fickling/test/fixtures")


def peer_label(name: str) -> str:
    if name in PEER_NESTED_BENIGN:
        return "nested-benign"
    if name.startswith(("malicious", "GHSA-")) or name in PEER_MALICIOUS_NAMES:
        return "malicious"
    return "benign"


def peers(with_tools: bool = True) -> dict:
    from torchpatch.audit.auditor import audit_path
    from torchpatch.versions import Version

    folders = os.environ.get("TORCHPATCH_PEER_SAMPLES")
    candidates = folders.split(":") if folders else DEFAULT_PEER_FOLDERS
    files = sorted(p for folder in candidates if Path(folder).is_dir() for p in Path(folder).iterdir() if p.is_file())
    if not files:
        print("peer samples: none found (set TORCHPATCH_PEER_SAMPLES)")
        return {}
    labels = {str(p): peer_label(p.name) for p in files}
    rows: dict[str, dict[str, str]] = {"torchpatch audit": {}}
    for path in labels:
        report = audit_path(path, Version(2, 13))
        rows["torchpatch audit"][path] = {"malicious": "flagged", "unreadable": "error"}.get(report.verdict, "clean")
    if with_tools:
        bin_dir = tool_venv()
        for tool, (command, outcomes) in tools(bin_dir).items():
            if tool != "torchpatch audit":
                rows[tool] = {path: run_tool(command, outcomes, path)[0] for path in labels}
    malicious = [p for p, l in labels.items() if l == "malicious"]
    benign = [p for p, l in labels.items() if l == "benign"]
    print(f"\npeer samples: {len(labels)} files from {', '.join(sorted({str(Path(p).parent) for p in labels}))} "
          f"({len(malicious)} malicious, {len(benign)} benign, {len(labels) - len(malicious) - len(benign)} nested-benign)\n")
    print("| tool | malicious detected | errors/unreadable (malicious) | false alarms on benign |")
    print("|---|---|---|---|")
    summary = {}
    for tool, outcome in rows.items():
        detected = sum(outcome[p] == "flagged" for p in malicious) / len(malicious)
        errors = sum(outcome[p] == "error" for p in malicious) / len(malicious)
        alarms = sum(outcome[p] == "flagged" for p in benign) / max(len(benign), 1)
        summary[tool] = {"detected": detected, "errors": errors, "false_alarms": alarms,
                         "missed": sorted(Path(p).name for p in malicious if outcome[p] != "flagged"),
                         "false_alarm_files": sorted(Path(p).name for p in benign if outcome[p] == "flagged")}
        print(f"| {tool} | {detected:.0%} | {errors:.0%} | {alarms:.0%} |")
    print(f"\ntorchpatch misses: {summary['torchpatch audit']['missed']}; false alarms: {summary['torchpatch audit']['false_alarm_files']}")
    return summary


def main() -> int:
    wanted = {arg.lstrip("-") for arg in sys.argv[1:]} or {"speed", "peers", "corpus"}
    out: dict = {}
    if "speed" in wanted:
        out["speed"] = speed()
    if "peers" in wanted:
        out["peers"] = peers()
    if "corpus" in wanted:
        out.update(corpus())
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "results.json").write_text(json.dumps(out, indent=1))
    return 0


def corpus() -> dict:
    folder = CACHE / "corpus"
    labels = generate(str(folder))
    decisions = torch_decisions([str(folder / name) for name in labels])
    for name in labels:
        labels[name]["torch_2_13"] = decisions[str(folder / name)]
    bin_dir = tool_venv()
    env_note = {}
    results: dict[str, dict] = {}
    runs: dict[str, dict[str, tuple[str, float]]] = {}
    for tool, (command, outcomes) in tools(bin_dir).items():
        runs[tool] = {name: run_tool(command, outcomes, str(folder / name)) for name in sorted(labels)}
    runs.update(torch_baselines([str(folder / name) for name in sorted(labels)]))
    for tool, rows in runs.items():
        malicious = [n for n in labels if labels[n]["expected"] == "malicious"]
        benign = [n for n in labels if labels[n]["expected"] != "malicious"]

        def count(names: list[str], outcome: str, rows: dict = rows) -> int:
            return sum(rows.get(n, ("error", 0.0))[0] == outcome for n in names)

        results[tool] = {
            "detected": count(malicious, "flagged") / len(malicious),
            "missed": count(malicious, "clean") / len(malicious),
            "errors": (count(malicious, "error") + count(benign, "error")) / len(labels),
            "false_alarms": count(benign, "flagged") / len(benign),
            "median_s": statistics.median(t for _, t in rows.values()),
            "total_s": sum(t for _, t in rows.values()),
            "missed_files": sorted(n for n in malicious if rows.get(n, ("error",))[0] != "flagged"),
            "false_alarm_files": sorted(n for n in benign if rows.get(n, ("error",))[0] == "flagged"),
        }
    env_note["torchpatch_in_process"] = in_process_timings(labels, folder)
    env_note["fickling_injected"] = fickling_injections(bin_dir, folder)
    malicious_count = sum(l["expected"] == "malicious" for l in labels.values())
    print(f"corpus: {len(labels)} files ({malicious_count} malicious, {len(labels) - malicious_count} benign)\n")
    print("| tool | malicious detected | missed | errors/skips (all files) | false alarms on benign | median s/file (CLI; torch rows in-process) |")
    print("|---|---|---|---|---|---|")
    for tool, r in results.items():
        print(f"| {tool} | {r['detected']:.0%} | {r['missed']:.0%} | {r['errors']:.0%} | {r['false_alarms']:.0%} | {r['median_s']:.3f} |")
    timing = env_note["torchpatch_in_process"]
    print(f"\ntorchpatch in-process: median {timing['median_ms']:.1f} ms/file, max {timing['max_ms']:.1f} ms; "
          f"weights_only agreement with torch 2.13: {timing['weights_only_agreement']:.0%}; "
          f"6 GiB sparse legacy checkpoint: {timing['sparse_6GiB_ms']:.1f} ms")
    injected = env_note["fickling_injected"]
    caught = sum(v == "malicious" for v in injected.values())
    print(f"payloads injected by fickling --inject (not written by torchpatch's authors): {caught} of {len(injected)} flagged malicious")
    return {"tools": results, **env_note}


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
