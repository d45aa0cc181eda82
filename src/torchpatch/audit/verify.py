"""Confirm a static verdict with torch's own weights-only unpickler, in a subprocess, reading no tensor data."""

from __future__ import annotations

import json
import subprocess
import sys

# Runs in a throwaway interpreter: torch's restricted Unpickler over the checkpoint's pickles,
# with a persistent_load stub so no storage bytes are read. A refusal is an UnpicklingError.
_PROBE = r'''
import importlib, io, json, os, sys
import torch
from torch import _weights_only_unpickler as wo
def resolve(name):
    module, _, attr = name.rpartition(".")
    try:
        obj = importlib.import_module(module)
    except ImportError:
        parent, _, cls = module.rpartition(".")
        obj = getattr(importlib.import_module(parent), cls)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return (obj, name)

class Stub(wo.Unpickler):
    def persistent_load(self, pid):
        storage_type, numel = pid[1], pid[4]
        dtype = torch.uint8 if storage_type is torch.UntypedStorage else storage_type.dtype
        nbytes = numel * torch._utils._element_size(dtype)
        untyped = torch.UntypedStorage(nbytes, device="meta")
        return torch.storage.TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

def check(path, allow):
    from torchpatch.audit.formats import open_checkpoint
    with open(path, "rb") as handle:
        opened = open_checkpoint(handle, os.path.getsize(path))
    if opened.format == "safetensors" and path.endswith(".safetensors"):
        from safetensors import safe_open
        with safe_open(path, "pt") as archive:
            list(archive.keys())
        return
    if opened.format == "torchscript":
        raise RuntimeError("Cannot use weights_only=True with TorchScript archives")
    if opened.format in ("tar", "none", "safetensors") or opened.unreadable or opened.torch_error and opened.format != "pickle":
        raise RuntimeError(opened.unreadable or opened.torch_error or f"torch.load does not unpickle a {opened.format} file")
    with torch.serialization.safe_globals(allow):
        for member in [m for m in opened.members if m.read_by_torch]:
            Stub(io.BytesIO(member.data), encoding="utf-8").load()
            if opened.format == "pickle":
                raise RuntimeError("Invalid magic number; corrupt file?")

for line in sys.stdin:
    path, entries = json.loads(line)
    try:
        check(path, [resolve(name) for name in entries])
        print(json.dumps({"accepted": True, "error": ""}), flush=True)
    except Exception as error:
        print(json.dumps({"accepted": False, "error": f"{type(error).__name__}: {error}"[:500]}), flush=True)
'''


def verify(items: list[tuple[str, list[str]]], timeout: float = 300.0) -> list[tuple[bool | None, str]]:
    """For each (path, allowlist): (accepted, error) from torch's unpickler, or (None, why) when torch cannot run."""
    if not items:
        return []
    request = "".join(json.dumps([path, allowlist]) + "\n" for path, allowlist in items)
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], check=False, input=request, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [(None, f"torch did not finish within {timeout:.0f} s")] * len(items)
    lines = done.stdout.strip().splitlines()
    if len(lines) != len(items):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [(None, f"torch could not be run: {tail}")] * len(items)
    return [(r["accepted"], r["error"]) for r in map(json.loads, lines)]
