"""Build the audit's name table from the real modules: re-exports and the classes each module defines."""

# Usage: python scripts/build_name_table.py   (in a venv with torch 2.13 and numpy installed)
# Imports torch, numpy, what a torch install always brings (sympy, mpmath, networkx, jinja2,
# markupsafe, filelock, fsspec, typing_extensions) and the standard library (minus modules that act on import: this,
# antigravity, GUI toolkits), then records for every imported module of those packages
#   - "reexports": module -> {attr: "real.module.qualname"} whenever the attribute is a module,
#     class or function defined somewhere else (torch.utils.cpp_extension.subprocess -> subprocess,
#     torch.distributed.FileStore -> torch._C._distributed_c10d.FileStore);
#   - "classes": module -> the class names it defines itself;
#   - "modules": every module that was scanned, so a name absent from it is known not to exist;
#   - "string_evaluators": every class, wherever defined, that subclasses sympy.Basic: building
#     one sympifies its arguments, and sympify evaluates a string as Python code (eval), so
#     torch's own torch.utils._sympy classes are judged as what they are, not by their prefix.
# The pickle auditor walks dotted names through this table (torchpatch never imports them), so
# a global is judged as what it resolves to, not as what it is spelled.

from __future__ import annotations

import gzip
import importlib
import json
import pkgutil
import sys
import types
import warnings
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "torchpatch" / "audit" / "data" / "names.json.gz"

# Modules that do something when imported, or need a display, or are test-only.
SKIP_PREFIXES = (
    "this", "antigravity", "idlelib", "tkinter", "turtle", "turtledemo", "__main__", "__phello__", "__hello__",
    "torch.testing._internal", "torch._inductor.fx_passes.serialized_patterns", "numpy.distutils", "lib2to3",
    "torch.utils.tensorboard", "torch.contrib", "torch._dynamo.test", "torch.onnx._internal.exporter",
    "numpy.f2py.tests", "numpy._core.tests", "numpy.tests", "test", "pydoc_data", "sympy.this",
)
# torch's install requirements (torch 2.13's METADATA Requires-Dist) besides numpy.
PACKAGES = ("torch", "numpy", "sympy", "mpmath", "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "typing_extensions")


def skipped(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in SKIP_PREFIXES) or ".tests" in name or ".test_" in name


def import_everything() -> None:
    warnings.simplefilter("ignore")
    for name in sorted(sys.stdlib_module_names):
        if not skipped(name):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - a stdlib module this platform lacks
                pass
    for package in PACKAGES:
        root = importlib.import_module(package)
        if not hasattr(root, "__path__"):  # a single-module distribution (typing_extensions)
            continue
        for info in pkgutil.walk_packages(root.__path__, package + ".", onerror=lambda _: None):
            if skipped(info.name):
                continue
            try:
                importlib.import_module(info.name)
            except BaseException:  # noqa: BLE001 - optional dependencies (triton, scipy) are missing
                pass


def wanted(name: str) -> bool:
    top = name.split(".")[0]
    return (top in PACKAGES or top in sys.stdlib_module_names or top in ("_io", "posix", "nt")) and not skipped(name)


def real_name(value: object) -> str | None:
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None)
        if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
            return f"{module}.{qualname}"
    return None


def build() -> dict:
    import_everything()
    import sympy

    reexports: dict[str, dict[str, str]] = {}
    classes: dict[str, list[str]] = {}
    string_evaluators: set[str] = set()
    scanned = sorted(name for name, module in list(sys.modules.items()) if isinstance(module, types.ModuleType) and wanted(name))
    for name in scanned:
        module = sys.modules[name]
        own: list[str] = []
        try:
            attributes = dict(vars(module))
        except TypeError:
            continue
        for attr, value in attributes.items():
            if attr.startswith("__") and attr.endswith("__"):
                continue
            target = real_name(value)
            if target is None:
                continue
            written = f"{name}.{attr}"
            if isinstance(value, type) and issubclass(value, sympy.Basic):
                string_evaluators.add(target)
            if target == written:
                if isinstance(value, type):
                    own.append(attr)
                continue
            reexports.setdefault(name, {})[attr] = target
        if own:
            classes[name] = sorted(own)
    import numpy
    import torch

    return {
        "built_from": {"torch": torch.__version__, "numpy": numpy.__version__, "sympy": sympy.__version__,
                       "python": sys.version.split()[0]},
        "modules": scanned,
        "string_evaluators": sorted(string_evaluators),
        "classes": classes,
        "reexports": reexports,
    }


def main() -> None:
    table = build()
    text = json.dumps(table, separators=(",", ":"), sort_keys=True) + "\n"
    # mtime=0: the same modules give the same bytes.
    OUT.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    print(f"{OUT}: {len(table['modules'])} modules, {sum(map(len, table['classes'].values()))} classes, "
          f"{sum(map(len, table['reexports'].values()))} re-exports, {len(table['string_evaluators'])} string-evaluating classes, "
          f"{OUT.stat().st_size >> 10} KiB")


if __name__ == "__main__":
    main()
