"""Convert a checkpoint that loads with weights_only=True to safetensors plus a JSON side-car."""

from __future__ import annotations

import importlib
import json
import os
import warnings
from typing import Any


def _resolve(name: str) -> Any:
    module, _, attr = name.rpartition(".")
    parts = attr.split(".")
    while True:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:
            module, _, head = module.rpartition(".")
            parts.insert(0, head)
            if not module:
                raise
    for part in parts:
        obj = getattr(obj, part)
    return obj


def _flatten(value: Any, prefix: str, tensors: dict, extras: dict, torch: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensors[prefix] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), tensors, extras, torch)
    elif isinstance(value, (list, tuple)) and any(isinstance(v, (torch.Tensor, dict, list, tuple)) for v in value):
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}.{index}" if prefix else str(index), tensors, extras, torch)
    else:
        try:
            json.dumps(value)
            extras[prefix] = value
        except (TypeError, ValueError):
            extras[prefix] = {"repr": repr(value), "note": "not JSON-serialisable; stored as its repr"}


def convert(path: str, out: str, allowlist: list[str]) -> list[str]:
    """Write ``out`` (safetensors) and ``out``.json; return human-readable notes. Never overwrites."""
    import torch
    from safetensors.torch import save_file

    sidecar = out + ".json"
    for target in (out, sidecar):
        if os.path.exists(target):
            raise FileExistsError(f"{target} already exists; refusing to overwrite")
    # torch warns about TypedStorage and quantized dtypes on load; the notes below say what matters.
    with warnings.catch_warnings(), torch.serialization.safe_globals([(_resolve(name), name) for name in allowlist]):
        warnings.simplefilter("ignore")
        loaded = torch.load(path, weights_only=True, map_location="cpu")
    tensors: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    _flatten(loaded, "", tensors, extras, torch)
    notes: list[str] = []
    ready: dict[str, Any] = {}
    shared: dict[str, str] = {}
    seen: dict[tuple, str] = {}
    for name, tensor in tensors.items():
        key = name or "tensor"
        if tensor.is_quantized:
            notes.append(f"{key}: quantized tensors are not supported by safetensors; stored dequantized (float32)")
            tensor = tensor.dequantize()
        if tensor.layout != torch.strided:
            notes.append(f"{key}: {tensor.layout} tensor stored dense")
            tensor = tensor.to_dense()
        if tensor.dtype == torch.complex128:
            notes.append(f"{key}: complex128 is not a safetensors dtype; stored as float64 pairs (torch.view_as_real)")
            tensor = torch.view_as_real(tensor)
            extras.setdefault("__complex128__", []).append(key)
        identity = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)
        if tensor.untyped_storage().nbytes() and identity in seen:
            shared[key] = seen[identity]
            notes.append(f"{key}: tied to {seen[identity]}; stored once (see the side-car's shared map)")
            continue
        seen[identity] = key
        if not tensor.is_contiguous():
            notes.append(f"{key}: non-contiguous; stored contiguous")
        # Copy so that views of one storage (which safetensors refuses) become separate tensors.
        ready[key] = tensor.detach().contiguous().clone()
    save_file(ready, out, metadata={"format": "pt", "source": os.path.basename(path)})
    with open(sidecar, "x", encoding="utf-8") as handle:
        json.dump({"values": extras, "shared": shared, "notes": notes}, handle, indent=2, default=repr)
    notes.append(f"wrote {out} ({len(ready)} tensors) and {sidecar} ({len(extras)} other values)")
    return notes
