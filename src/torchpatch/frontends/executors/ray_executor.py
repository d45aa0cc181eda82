"""Ray core tasks for many files: batches of files per task, results in input order, every item answered.

Each task runs ``function(shared, batch)`` on a batch of items and returns one result per item. ``shared``
(the settings, the torch release) is put in Ray's object store once. Ray retries a task whose worker
died (``max_retries``); a batch that still fails is split and its items run one per task, so one file
that kills its worker costs only that file: ``on_lost(item, why)`` answers for it, and the run goes on.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any, Callable, Iterator, Sequence

from torchpatch import install_hint

#: Files per task: large enough that Ray's per-task cost (a few ms) stays small against the work, small
#: enough that every core gets several batches (and a retried batch repeats little).
MIN_BATCH = 16
MAX_BATCH = 512
#: Batches per CPU submitted ahead of the one being collected: bounded memory on any number of files.
WINDOW_PER_CPU = 4
DEFAULT_RETRIES = 3


class RayMissing(Exception):
    pass


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayMissing(f"--executor ray needs Ray: {install_hint('ray')}") from None
    return ray


def connect(address: str | None) -> bool:
    """Join the cluster at ``address`` (or ``$RAY_ADDRESS``), else start a local one; True when this call
    started Ray (and the caller should shut it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=True)
    return True


def batch_size(count: int, cpus: int) -> int:
    return max(MIN_BATCH, min(MAX_BATCH, count // max(1, cpus * WINDOW_PER_CPU)))


def _run(function: Callable, shared: Any, batch: Sequence) -> list:
    return function(shared, batch)


def ray_map(function: Callable[[Any, Sequence], list], shared: Any, items: Sequence,
            on_lost: Callable[[Any, str], Any], max_retries: int | None = None,
            size: int | None = None) -> Iterator:
    """``function`` over ``items`` in batches on the Ray cluster; yields one result per item, in order."""
    ray = import_ray()
    if not items:
        return
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = size or batch_size(len(items), cpus)
    remote = ray.remote(max_retries=DEFAULT_RETRIES if max_retries is None else max_retries)(_run)
    shared_ref = ray.put(shared)
    batches = [items[start:start + size] for start in range(0, len(items), size)]
    window = cpus * WINDOW_PER_CPU
    pending: deque = deque()
    submitted = 0
    while submitted < len(batches) or pending:
        while submitted < len(batches) and len(pending) < window:
            pending.append((batches[submitted], remote.remote(function, shared_ref, batches[submitted])))
            submitted += 1
        batch, ref = pending.popleft()
        try:
            results = ray.get(ref)
        except ray.exceptions.RayError as error:
            results = _one_by_one(ray, remote, function, shared_ref, batch, on_lost, error)
        if len(results) != len(batch):
            raise RuntimeError(f"a Ray task answered {len(results)} results for {len(batch)} items")
        yield from results


def _one_by_one(ray, remote, function, shared_ref, batch: Sequence, on_lost, batch_error) -> list:
    if len(batch) == 1:
        return [on_lost(batch[0], _why(batch_error))]
    refs = [remote.remote(function, shared_ref, [item]) for item in batch]
    results = []
    for item, ref in zip(batch, refs):
        try:
            results.extend(ray.get(ref))
        except ray.exceptions.RayError as error:
            results.append(on_lost(item, _why(error)))
    return results


def _why(error: Exception) -> str:
    name = type(error).__name__
    if "WorkerCrashed" in name or "ActorDied" in name or "NodeDied" in name or "ObjectLost" in name:
        return f"the Ray worker died on this file ({name}) after its retries"
    first = str(error).strip().splitlines()
    return f"the Ray task failed ({name}: {first[-1] if first else ''})"
