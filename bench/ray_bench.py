#!/usr/bin/env python3
"""``--executor ray`` against the process pool (``-j``) on this machine, and the figures for a projection.

    python bench/ray_bench.py                        # torch's own .py files (3,000 of them), 2,000 checkpoints
    python bench/ray_bench.py --files 1000 --checkpoints 500 --cpus 2
    python bench/ray_bench.py --checkpoint-only       # bytes and reads per real checkpoint, in seconds

Everything runs in one process, so Ray's start-up (once per command on a real run) is measured apart from
its throughput: the same file list is checked by ``-j 1``, by the spawn pool with ``--cpus`` workers, and
twice by Ray tasks on a local cluster of ``--cpus`` CPUs (the first Ray pass includes importing torchpatch
in each worker, as a one-off command pays it). No cache. Memory per worker is the peak RSS
(``ru_maxrss``) of each worker process after its batches. The audit part writes torch-style zip
checkpoints (one in ten malicious) and, if torch is installed, one real 100-tensor ``torch.save`` file of
100 MB, and reports the bytes the auditor read per checkpoint, locally and through fsspec byte ranges.

Needs the extra: ``pip install -e '.[ray]'`` (torch only for the corpus and the real checkpoint).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from scan_helpers import MALICIOUS, SAFE  # noqa: E402

from torchpatch.engine.config import Overrides, SettingsResolver  # noqa: E402
from torchpatch.engine.parallel import Mode, _init_worker, check_files, run_batch, start_method  # noqa: E402
from torchpatch.frontends.executors import ray_executor, scan  # noqa: E402
from torchpatch.versions import Version  # noqa: E402


def corpus(count: int) -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("ray_bench: the corpus is torch's own sources: pip install torch (CPU)")
    root = Path(list(spec.submodule_search_locations)[0])
    return sorted(root.rglob("*.py"))[:count]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pool_batch(tasks):
    from torchpatch.engine import parallel

    job = parallel._worker_job
    run_batch(job.settings, job.mode, False, tasks)
    return os.getpid(), peak_rss_mib()


def pool_memory(files, settings_list, cpus: int) -> list[float]:
    tasks = [(path, 0) for path in files]
    chunks = [tasks[start::cpus * 4] for start in range(cpus * 4)]
    context = multiprocessing.get_context(start_method())
    with context.Pool(cpus, initializer=_init_worker, initargs=(settings_list, Mode(), False)) as pool:
        peaks: dict[int, float] = {}
        for pid, rss in pool.map(_pool_batch, chunks, 1):
            peaks[pid] = max(peaks.get(pid, 0.0), rss)
    return sorted(peaks.values())


def ray_memory(ray, cpus: int) -> list[float]:
    @ray.remote
    def peak():
        time.sleep(0.2)  # keep the worker busy so the next task lands on another one
        return os.getpid(), peak_rss_mib()

    peaks = dict(ray.get([peak.remote() for _ in range(cpus * 4)]))
    return sorted(peaks.values())


def timed(label: str, function) -> float:
    started = time.perf_counter()
    function()
    elapsed = time.perf_counter() - started
    print(f"  {label:<34} {elapsed:7.2f} s", flush=True)
    return elapsed


def bench_check(files: list[Path], cpus: int, ray) -> dict:
    resolver = SettingsResolver(Overrides(isolated=True))
    settings = resolver.for_file(files[0])
    lines = sum(len(path.read_bytes().splitlines()) for path in files)
    print(f"check: {len(files)} files, {lines / 1e6:.2f} M lines (torch's sources), {cpus} CPUs")
    results = {}
    cpu = time.process_time()
    results["one"] = timed("-j 1 (this process)", lambda: check_files(files, lambda _: settings, Mode(), 1))
    results["one_cpu"] = time.process_time() - cpu
    print(f"  -j 1 CPU time {results['one_cpu']:.2f} s: {results['one_cpu'] / len(files) * 1e3:.2f} CPU-ms/file")
    results["pool"] = timed(f"-j {cpus} (spawn pool, incl. start)", lambda: check_files(files, lambda _: settings, Mode(), cpus))
    results["ray_init"] = timed(f"ray.init(num_cpus={cpus})", lambda: ray.init(
        num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR"))
    executor = scan._ray_check_executor
    results["ray_first"] = timed("Ray tasks, first pass", lambda: check_files(files, lambda _: settings, Mode(), cpus, executor=executor))
    results["ray"] = timed("Ray tasks, warm workers", lambda: check_files(files, lambda _: settings, Mode(), cpus, executor=executor))
    size = ray_executor.batch_size(len(files), cpus)
    print(f"  batch size {size} files/task, {-(-len(files) // size)} tasks")
    results["pool_rss"] = pool_memory(files, [settings], cpus)
    results["ray_rss"] = ray_memory(ray, cpus)
    print(f"  peak RSS per worker: pool {', '.join(f'{v:.0f}' for v in results['pool_rss'])} MiB; "
          f"Ray {', '.join(f'{v:.0f}' for v in results['ray_rss'])} MiB")
    for key in ("one", "pool", "ray"):
        print(f"  {key:>5}: {len(files) / results[key]:7.0f} files/s, {results[key] / len(files) * 1e3:6.2f} ms/file wall")
    results["files"] = len(files)
    return results


def bench_audit(count: int, cpus: int, ray, folder: Path) -> dict:
    for index in range(count):
        (folder / f"ckpt{index:05d}.pt").write_bytes(MALICIOUS if index % 10 == 3 else SAFE)
    version = Version.parse("2.13")
    work = [(str(path), None) for path in sorted(folder.glob("*.pt"))]
    print(f"audit: {count} small torch-zip checkpoints ({len(SAFE)} bytes each)")
    local = {}
    one = timed("in this process", lambda: local.update(out=scan.audit_batch(version, work)))
    remote_work = [(f"file://{name}", None) for name, _ in work]
    lost = lambda item, why: (None, 0, 0)  # noqa: E731
    ray_first = timed("Ray tasks, file:// byte ranges", lambda: list(ray_executor.ray_map(scan.audit_batch, version, remote_work, lost)))
    outcomes = []
    ray_warm = timed("Ray tasks, again", lambda: outcomes.extend(ray_executor.ray_map(scan.audit_batch, version, remote_work, lost)))
    fetched = [b for _, b, _ in outcomes]
    print(f"  {count / one:7.0f} checkpoints/s in one process, {count / ray_warm:7.0f} on Ray ({cpus} CPUs); "
          f"bytes read per checkpoint (byte ranges): median {statistics.median(fetched):.0f}")
    result = {"one": one, "ray_first": ray_first, "ray": ray_warm, "count": count, "bytes_small": statistics.median(fetched)}
    result.update(bench_big_checkpoint(version, folder))
    return result


def bench_big_checkpoint(version, folder: Path) -> dict:
    """Bytes and reads for one real 100-tensor torch.save file, local and through fsspec (file://)."""
    result: dict = {}
    try:
        import torch
    except ImportError:
        return result
    big = folder / "big.pt"
    torch.save({f"layer{i}.weight": torch.randn(512, 512) for i in range(100)}, big)
    for name in (str(big), f"file://{big}"):
        started = time.perf_counter()
        report, fetched_bytes, requests = scan.audit_one(version, name, None)
        elapsed = time.perf_counter() - started
        print(f"  real torch.save file, {big.stat().st_size / 1e6:.0f} MB, 100 tensors, {name[:7]}: {report.verdict}, "
              f"{fetched_bytes / 1024:.0f} KiB read in {requests} reads, {elapsed * 1e3:.0f} ms")
        result["bytes_big" if name.startswith("file://") else "bytes_big_local"] = fetched_bytes
        result["requests_big"] = requests
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--checkpoints", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--checkpoint-only", action="store_true",
                        help="only the real torch.save file's bytes and reads (no Ray, seconds)")
    options = parser.parse_args()
    if options.checkpoint_only:
        with tempfile.TemporaryDirectory() as folder:
            bench_big_checkpoint(Version.parse("2.13"), Path(folder))
        return
    ray = ray_executor.import_ray()
    files = corpus(options.files)
    check = bench_check(files, options.cpus, ray)
    with tempfile.TemporaryDirectory() as folder:
        audit = bench_audit(options.checkpoints, options.cpus, ray, Path(folder))
    ray.shutdown()
    # The CPU cost of one file (-j 1's CPU time), times Ray's overhead over the pool (warm wall times).
    overhead = max(1.0, check["ray"] / check["pool"])
    per_file_cpu = check["one_cpu"] / check["files"] * overhead
    per_ckpt_cpu = audit["ray"] * options.cpus / audit["count"]
    print(f"\nprojection (an estimate: this machine's per-file cost x count, perfect scaling, no I/O latency; "
          f"Ray/pool overhead x{overhead:.2f}):")
    print(f"  check: {per_file_cpu * 1e3:.1f} CPU-ms/file -> 100k repositories x 300 files = 30 M files = "
          f"{per_file_cpu * 30e6 / 3600:.0f} CPU-hours ({per_file_cpu * 30e6 / 3600 / 256:.1f} h on 256 CPUs)")
    print(f"  audit: {per_ckpt_cpu * 1e3:.2f} CPU-ms/checkpoint (small) -> 10 M checkpoints = "
          f"{per_ckpt_cpu * 10e6 / 3600:.1f} CPU-hours; bytes read: {audit.get('bytes_big', audit['bytes_small']) / 1024:.0f} KiB "
          f"per 100-tensor checkpoint -> {audit.get('bytes_big', audit['bytes_small']) * 10e6 / 1e12:.2f} TB for 10 M")


if __name__ == "__main__":
    main()
