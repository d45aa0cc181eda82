"""Extract torch's weights-only unpickler rules from release wheels into torchpatch's audit data."""

# Usage: python scripts/extract_weights_only_allowlist.py 2.4.1 2.6.0 2.10.0 2.13.0 2.15.0
# For each release: pip download the wheel (no deps), read only the pure-Python sources it needs
# straight from the wheel (that torch is never imported), delete the wheel, and merge one entry
# per minor release into src/torchpatch/audit/data/weights_only.json. When the installed torch
# is the same release, the static result is checked against its runtime _get_allowed_globals().

from __future__ import annotations

import argparse
import ast
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "src" / "torchpatch" / "audit" / "data" / "weights_only.json"

# Modules that `import torch` itself imports and that call add_safe_globals at import time
# (measured on 2.13: NJT support in torch.nested, mesh layouts in torch.distributed.device_mesh),
# so their entries are allowlisted in every process that has imported torch.
IMPORT_TIME_MODULES = ("torch/nested/__init__.py", "torch/distributed/device_mesh.py")

SOURCES = (
    *IMPORT_TIME_MODULES,
    "torch/_weights_only_unpickler.py",
    "torch/_utils.py",
    "torch/storage.py",
    "torch/__init__.py",
    "torch/cuda/__init__.py",
    "torch/serialization.py",
)

# str(dtype) of torch's dtype aliases: ``str(torch.float)`` is "torch.float32".
DTYPE_ALIASES = {
    "double": "float64",
    "float": "float32",
    "half": "float16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "cdouble": "complex128",
    "cfloat": "complex64",
    "chalf": "complex32",
}

# The legacy tensor types (torch._tensor_classes) are created in C++ by
# torch/csrc/tensor/python_tensor.cpp, so no Python source lists them; the set has been the same
# CPU/CUDA x dense/sparse product since 1.x (sparse has no Bool type).
_SCALARS = ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")
TENSOR_CLASSES = sorted(
    [f"torch.{s}Tensor" for s in _SCALARS]
    + [f"torch.cuda.{s}Tensor" for s in _SCALARS]
    + [f"torch.sparse.{s}Tensor" for s in _SCALARS if s != "Bool"]
    + [f"torch.cuda.sparse.{s}Tensor" for s in _SCALARS if s != "Bool"]
)


def function_source(source: str, name: str, within: str | None = None) -> str:
    """The source text of the function ``name`` (a method of class ``within`` if given), or ""."""
    tree = ast.parse(source)
    if within is not None:
        tree = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == within), ast.Module(body=[], type_ignores=[]))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(source, node) or ""
    return ""


def assigned_literal(source: str, name: str):
    """The literal value assigned to the module-level ``name``, or None."""
    for node in ast.parse(source).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def import_time_safe_globals(path: str, source: str) -> list[str]:
    """Names passed to add_safe_globals outside any function in ``path`` (resolved through its imports)."""
    package = path[: -len("/__init__.py")] if path.endswith("/__init__.py") else path.rsplit("/", 1)[0]
    package = package.replace("/", ".")
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    nested = {id(inner) for f in functions for inner in ast.walk(f) if inner is not f}
    names = []
    for node in ast.walk(tree):
        if id(node) in nested or not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in ("add_safe_globals", "_add_safe_globals") and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            names.extend(aliases.get(e.id, e.id) for e in node.args[0].elts if isinstance(e, ast.Name))
    return names


def dtype_name(attribute: str) -> str:
    return "torch." + DTYPE_ALIASES.get(attribute, attribute)


def extract(files: dict[str, str]) -> dict:
    unpickler = files["torch/_weights_only_unpickler.py"]
    allowed_fn = function_source(unpickler, "_get_allowed_globals")
    rebuild_fn = function_source(unpickler, "_tensor_rebuild_functions")
    names: set[str] = set()
    names.update(re.findall(r'^\s*"([\w.]+)":', allowed_fn, re.MULTILINE))
    names.update(re.findall(r'rc\["([\w.]+)"\]\s*=', allowed_fn))
    for fn_name in re.findall(r"torch\._utils\.(_rebuild\w+)", rebuild_fn + allowed_fn):
        names.add(f"torch._utils.{fn_name}")
    names.update(f"torch.{q}" for q in re.findall(r"torch\.(per_\w+)", allowed_fn))
    storage = files["torch/storage.py"]
    if "_dtype_to_storage_type_map()" in allowed_fn:
        mapping = function_source(storage, "_dtype_to_storage_type_map")
        names.update(dtype_name(a) for a in re.findall(r"torch\.(\w+):", mapping))
    if "_new_dtypes()" in allowed_fn:
        names.update(dtype_name(a) for a in re.findall(r"torch\.(\w+),", function_source(storage, "_new_dtypes")))
    for prefix, low, high in re.findall(r'getattr\(torch, f"(u?int)\{x\}"\) for x in range\((\d+), (\d+)\)', allowed_fn):
        names.update(f"torch.{prefix}{x}" for x in range(int(low), int(high)))
    if "_tensor_classes" in allowed_fn:
        names.update(TENSOR_CLASSES)
    if "_storage_classes" in allowed_fn:
        block = re.search(r"_storage_classes[^=]*=\s*\{(.*?)\}", files["torch/__init__.py"], re.DOTALL)
        for cls in re.findall(r"\w+", block.group(1) if block else ""):
            if cls in ("TypedStorage", "UntypedStorage"):
                names.add(f"torch.storage.{cls}")
            elif cls != "type":
                names.add(f"torch.{cls}")
        names.update(f"torch.cuda.{c}" for c in re.findall(r"_storage_classes\.add\((\w+)\)", files["torch/cuda/__init__.py"]))
    load_fn = function_source(unpickler, "load", within="Unpickler")
    opcodes = sorted(
        {getattr(pickle, op).hex() for op in re.findall(r"\b([A-Z][A-Z0-9_]+)\[0\]", load_fn) if isinstance(getattr(pickle, op, None), bytes)}
    )
    uses_mapping = "IMPORT_MAPPING" in unpickler
    utils = files["torch/_utils.py"]
    name_mapping = assigned_literal(utils, "NAME_MAPPING") if uses_mapping else {}
    serialization = files["torch/serialization.py"]
    implicit = sorted({n for path in IMPORT_TIME_MODULES for n in import_time_safe_globals(path, files[path])})
    return {
        "import_time_allowlist": implicit,
        "allowlist": sorted(names),
        "blocked_modules": assigned_literal(unpickler, "_blocklisted_modules") or [],
        "opcodes": opcodes,
        "setitem_dict_only": "_check_set_item_target" in unpickler,
        "build_allows_default_types": "type(inst) in _get_allowed_globals().values()" in unpickler,
        "import_mapping": (assigned_literal(utils, "IMPORT_MAPPING") or {}) if uses_mapping else {},
        "name_mapping": [[list(k), list(v)] for k, v in (name_mapping or {}).items()],
        "torchscript_refused": "Cannot use ``weights_only=True`` with TorchScript archives" in serialization,
        "tar_refused": "legacy .tar format" in serialization,
        "default_weights_only": "_default_to_weights_only" in serialization,
        "safetensors_routed": "safetensors" in function_source(serialization, "load"),
    }


def read_wheel(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        present = set(archive.namelist())
        return {name: archive.read(name).decode("utf-8") if name in present else "" for name in SOURCES}


def download(release: str, folder: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(folder), f"torch=={release}"]
    # Only the wheel's sources are read, nothing is installed, so an environment constraint that
    # caps the installable torch must not hide newer releases from the download.
    subprocess.run(command, check=True, env={**os.environ, "PIP_CONSTRAINT": os.devnull})
    return next(folder.glob("torch-*.whl"))


def runtime_allowlist(release: str) -> tuple[list[str], list[str]] | None:
    """The installed torch's default and import-time allowlists, when it is ``release``."""
    probe = (
        "import json, torch\n"
        "from torch._weights_only_unpickler import _get_allowed_globals, _get_user_allowed_globals\n"
        "print(json.dumps([torch.__version__.split('+')[0], sorted(_get_allowed_globals()), sorted(_get_user_allowed_globals())]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        return None
    version, names, implicit = json.loads(done.stdout.strip().splitlines()[-1])
    return (names, implicit) if version == release else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("releases", nargs="+", help="torch releases, e.g. 2.6.0")
    parser.add_argument("--wheel", type=Path, help="use this local wheel instead of downloading (one release only)")
    args = parser.parse_args()
    data = json.loads(DATA.read_text()) if DATA.exists() else {}
    for release in args.releases:
        folder = Path(tempfile.mkdtemp(prefix="torch-wheel-"))
        try:
            wheel = args.wheel or download(release, folder)
            entry = extract(read_wheel(wheel))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        entry["release"] = release
        runtime = runtime_allowlist(release)
        for found, key in zip(runtime or (), ("allowlist", "import_time_allowlist")):
            if found != entry[key]:
                missing = sorted(set(found) - set(entry[key]))
                extra = sorted(set(entry[key]) - set(found))
                raise SystemExit(f"static {key} disagrees with installed torch {release}: missing {missing}, extra {extra}")
        minor = ".".join(release.split(".")[:2])
        data[minor] = entry
        print(f"torch {release}: {len(entry['allowlist'])} allowlisted globals, {len(entry['opcodes'])} opcodes"
              + (" (checked against the installed torch)" if runtime is not None else ""))
        write(data)
    return 0


def write(data: dict) -> None:
    """Save after every release, so a failed download later on loses nothing."""
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
