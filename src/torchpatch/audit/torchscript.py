"""TorchScript archives: what their pickles may name, and what the code in ``code/`` calls.

``torch.jit.load`` reads ``data.pkl`` and ``constants.pkl`` with TorchScript's C++ unpickler
(torch/csrc/jit/serialization/unpickler.cpp), not Python's: it knows a fixed set of helpers
(``torch.jit._pickle.build_intlist``, ``torch._utils._rebuild_tensor_v2``, storages,
``collections.OrderedDict``) and treats every other global as a TorchScript class compiled
from the archive's ``code/`` folder, whose ``__setstate__`` runs at load. No Python is imported,
so the risk of an archive is its TorchScript code, which is read here (parsed, never run).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from torchpatch.syntax import dotted_name as _dotted

# readGlobal in unpickler.cpp (torch 2.13): the globals the C++ unpickler resolves itself.
JIT_PICKLE_GLOBALS = frozenset(
    """
    torch.jit._pickle.build_intlist torch.jit._pickle.build_tensorlist torch.jit._pickle.build_doublelist
    torch.jit._pickle.build_boollist torch.jit._pickle.build_tensor_from_id torch.jit._pickle.restore_type_tag
    torch._utils._rebuild_tensor_v2 torch._utils._rebuild_qtensor torch._utils._rebuild_sparse_tensor
    torch._tensor._rebuild_from_type_v2 collections.OrderedDict builtins.complex torch.device torch.Device
    __main__.TensorID __main__.IntList __main__.TensorList __main__.LiteralTensor
    """.split()
)


def jit_global_status(full: str) -> str | None:
    """"benign" for a global TorchScript's unpickler handles itself or compiles from code/."""
    if full in JIT_PICKLE_GLOBALS:
        return "benign"
    module, _, name = full.rpartition(".")
    if module == "torch" and name.endswith("Storage"):
        return "benign"
    if full.startswith("__torch__.") or module == "__torch__":
        return "benign"
    return None


# aten/prim operators that touch files, the process or global state; everything else in aten,
# prim, quantized and the like is tensor math.
FILE_OPS = frozenset({"from_file", "save", "load", "read_file", "write_file", "_load_for_mobile", "_save_for_mobile",
                      "_export_operator_list", "_save_parameters", "_load_parameters", "decode_jpeg", "decode_png",
                      "load_audio", "save_audio", "open", "_jit_pass"})
SIDE_EFFECT_OPS = frozenset({"Print", "print", "manual_seed", "seed", "set_num_threads", "set_num_interop_threads",
                             "_set_deterministic_algorithms", "set_flush_denormal", "_cuda_setDevice", "RaiseException",
                             "warn", "_set_grad_enabled", "fork", "wait", "_fork", "_wait", "rpc_async", "rpc_sync", "remote",
                             "to_here", "_set_num_threads"})
BUILTIN_NAMESPACES = frozenset({"aten", "prim", "quantized", "_quantized", "profiler", "cuda", "_caffe2", "onednn", "mkldnn",
                                "mkl", "xnnpack", "prepacked", "_nnapi", "sparse", "fbgemm", "vulkan", "metal", "uninitialized",
                                "_test", "debug", "prims", "quantized_decomposed", "_c10d_functional"})
# Side-effect operators that only print, warn or raise: not a reason to call load-time code malicious.
HARMLESS_AT_LOAD = frozenset({"print", "aten::Print", "aten::warn", "prim::RaiseException", "prim::Print"})
# Names TorchScript code calls that are language builtins, not operators.
LANGUAGE_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "range", "isinstance", "annotate", "unchecked_cast",
                               "uninitialized", "getattr", "hasattr", "enumerate", "zip", "min", "max", "abs", "round",
                               "list", "dict", "tuple", "sorted", "divmod", "ord", "chr", "all", "any", "sum", "hash",
                               "format", "math", "torch", "ops", "CONSTANTS", "Optional", "List", "Dict", "Tuple", "Any",
                               "Union", "NoneType", "Tensor", "Future", "RRef", "Device", "Stream", "Await", "iter", "next",
                               "slice", "id", "bin", "hex", "oct", "pow", "reversed", "type", "complex"})


@dataclass
class CodeReport:
    """What the TorchScript methods of an archive call, by category."""

    methods: int = 0
    operators: set[str] = field(default_factory=set)
    file_ops: dict[str, set[str]] = field(default_factory=dict)  # op -> methods
    side_effects: dict[str, set[str]] = field(default_factory=dict)
    custom_ops: dict[str, set[str]] = field(default_factory=dict)
    unparsed: list[str] = field(default_factory=list)
    setstate: list[str] = field(default_factory=list)
    # (code record, line, operator, method) of every file, side-effect or extension operator call
    locations: list[tuple[str, int, str, str]] = field(default_factory=list)
    # method ("Class.name" or "function") -> the names of the methods and functions it calls
    callees: dict[str, set[str]] = field(default_factory=dict)

    def run_at_load(self) -> set[str]:
        """The methods torch.jit.load runs: every ``__setstate__`` and whatever it calls, followed by
        name (a call of ``self.sub.helper`` reaches every method named ``helper``: fail closed)."""
        by_name: dict[str, set[str]] = {}
        for method in self.callees:
            by_name.setdefault(method.rsplit(".", 1)[-1], set()).add(method)
        reached, todo = set(), list(self.setstate)
        while todo:
            method = todo.pop()
            if method in reached:
                continue
            reached.add(method)
            for name in self.callees.get(method, ()):
                todo.extend(by_name.get(name, ()))
        return reached

    def load_time_effects(self) -> list[str]:
        """"op (in method)" for each file, process, network, extension or side-effect operator that
        the code run at load calls; tensor math, printing, warnings and raising are not effects."""
        load = self.run_at_load()
        found = []
        for ops in (self.file_ops, self.custom_ops, self.side_effects):
            for op, methods in sorted(ops.items()):
                if op in HARMLESS_AT_LOAD:
                    continue
                hit = sorted(methods & load)
                if hit:
                    found.append(f"{op} (in {', '.join(hit[:3])})")
        return found

    def summary(self) -> str:
        parts = []
        if self.file_ops:
            parts.append("file operations " + _listing(self.file_ops))
        if self.custom_ops:
            parts.append("operators from C++ extensions (their code is not in the archive) " + _listing(self.custom_ops))
        if self.side_effects:
            parts.append("operators with side effects " + _listing(self.side_effects))
        if self.unparsed:
            parts.append(f"{len(self.unparsed)} code file(s) that do not parse ({', '.join(self.unparsed[:3])})")
        if not parts:
            return (f"its {self.methods} TorchScript method(s) call only tensor math ({len(self.operators)} distinct operators, "
                    "no file, network or process operations, no C++-extension operators)")
        return f"its {self.methods} TorchScript method(s) call " + "; ".join(parts)

    @property
    def worrying(self) -> bool:
        return bool(self.file_ops or self.custom_ops or self.unparsed)


def _listing(ops: dict[str, set[str]]) -> str:
    return ", ".join(f"{op} (in {', '.join(sorted(methods)[:3])})" for op, methods in sorted(ops.items())[:6])


def analyse(sources: dict[str, str]) -> CodeReport:
    """Read every ``code/*.py`` record (TorchScript's serialized Python subset)."""
    report = CodeReport()
    for name, text in sorted(sources.items()):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            report.unparsed.append(name)
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        _method(report, f"{node.name}.{item.name}", item, name)
            elif isinstance(node, ast.FunctionDef) and not _inside_class(tree, node):
                _method(report, node.name, node, name)
    return report


def _inside_class(tree: ast.AST, function: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.ClassDef) and function in n.body for n in ast.walk(tree))


def _method(report: CodeReport, where: str, function: ast.FunctionDef, record: str) -> None:
    report.methods += 1
    callees = report.callees.setdefault(where, set())
    if function.name == "__setstate__":
        report.setstate.append(where)
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute):
            callees.add(node.func.attr)  # self.helper(...), (self.sub).helper(...), __torch__.m.fn(...)
        elif isinstance(node.func, ast.Name):
            callees.add(node.func.id)
        dotted = _dotted(node.func)
        if dotted is None:
            continue  # a method of a value: (self.lin).forward(x), x.add_(1)
        parts = dotted.split(".")
        if parts[0] == "torch" and len(parts) >= 4 and parts[1] == "ops":
            namespace, op = parts[2], parts[-1]
        elif parts[0] == "ops" and len(parts) >= 3:
            namespace, op = parts[1], parts[-1]
        elif parts[0] == "torch":
            namespace, op = "aten", parts[-1]
        elif len(parts) == 1:
            if parts[0] in ("print",):
                report.side_effects.setdefault("print", set()).add(where)
                report.locations.append((record, node.lineno, "print", where))
            continue  # language builtins and calls of local functions
        else:
            continue
        key = f"{namespace}::{op}"
        report.operators.add(key)
        if namespace not in BUILTIN_NAMESPACES:
            report.custom_ops.setdefault(key, set()).add(where)
        elif op in FILE_OPS or op.lstrip("_") in FILE_OPS:
            report.file_ops.setdefault(key, set()).add(where)
        elif op in SIDE_EFFECT_OPS:
            report.side_effects.setdefault(key, set()).add(where)
        else:
            continue
        report.locations.append((record, node.lineno, key, where))


