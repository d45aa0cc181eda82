"""Compare torchpatch audit with picklescan, modelscan and fickling on the generated corpus."""

# Usage: python bench/audit_bench.py   (needs torch, numpy and safetensors to build the corpus)
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


def main() -> int:
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
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "results.json").write_text(json.dumps({"tools": results, **env_note}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
