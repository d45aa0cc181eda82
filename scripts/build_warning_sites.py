"""Mine the argument-level warnings of every torch release from the real wheels (maintainer script).

For each wheel this reads the Python sources (never importing them) and records every ``warnings.warn`` /
``warn_once`` / ``_warn_*`` helper site of a function or method together with the condition on the
function's own parameters that guards it: a keyword passed (``if reduce is not None``), passed with a given
value (``if reduction == "elementwise_mean"``, ``if return_complex is False``, ``if not only_inputs``), a
keyword left out (``if dim is None``, ``if align_corners is None``), positional ``*args`` (``if args:``).
A condition is followed through calls into torch's own helpers (``_Reduction.legacy_get_string``,
``_get_softmax_dim``, ``super().__init__``) and through ``self.attribute`` from ``__init__`` to the method
that reads it (``nn.Softmax(dim=None)`` warns in ``forward``). Only warnings that say a form is deprecated
or changes behaviour are kept, with torch's own message.

The result is ``src/torchpatch/rules/data/warning_sites.json.gz``, read by TP209 ``warned-argument`` and TP216 ``legacy-loss-reduction``:
callable (as user code spells it, a class for its ``__init__``) → its parameters and the warnings with the
first release that emits each and the release that stopped. A new release is data, not code:

    python scripts/build_warning_sites.py --wheels /work/wheels     # every release in build_api_db.RELEASES

The public spellings of each definition come from ``build_api_db.read_release`` (its per-wheel cache is
shared); this script keeps its own per-wheel cache keyed on READER_VERSION.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_api_db  # noqa: E402  (the sibling script: releases, wheel reading, public spellings)

from torchpatch.syntax import dotted_name  # noqa: E402

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "torchpatch" / "rules" / "data" / "warning_sites.json.gz"
#: Bump when read_wheel changes what it records (the per-wheel cache is keyed on it).
READER_VERSION = 2

#: A warning that says a form is deprecated or changes behaviour (a plain UserWarning must say so in words).
_DEPRECATION_CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}
_CHANGE_WORDS = re.compile(r"deprecat|will be removed|will change|will be changed|has changed|no longer|"
                           r"was removed|has been removed|in a future|will raise|not provided", re.I)
#: Guards that say nothing about the call's arguments (scripting, tracing, compiling, torch-function overrides).
_ENVIRONMENT_CHECK = re.compile(r"is_scripting|is_tracing|_get_tracing_state|is_compiling|has_torch_function|"
                                r"_is_fx_tracing|is_dynamo_compiling")
_SKIPPED_MODULES = ("torch._inductor", "torch._dynamo", "torch.testing", "torch._vendor", "torch.utils._sympy",
                    "torch._functorch", "torch.fx.experimental", "torch._export", "torch.export._trace")
_UNKNOWN = object()

#: Warnings torch gives from C++ (``TORCH_WARN`` in ATen and the Python bindings), where no Python source
#: guards them: the same records, written by hand from torch's sources and checked by the torch oracle
#: (tests/test_torch_oracle.py runs TP208's examples). ``since`` is the first release of the range read.
NATIVE_SITES = {
    "torch.stft": {
        "positional": ["input", "n_fft", "hop_length", "win_length", "window", "center", "pad_mode", "normalized",
                       "onesided", "return_complex"],
        "warnings": [
            # aten/src/ATen/native/SpectralOps.cpp: TORCH_WARN_ONCE when window is undefined.
            {"when": [["missing", "window"]], "category": "UserWarning",
             "message": "A window was not provided. A rectangular window will be applied,which is known to cause "
                        "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                        "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                        "window, explicitly set `window=torch.ones(n_fft, device=<device>)`."},
            {"when": [["equals", "return_complex", [False]]], "category": "UserWarning",
             "message": "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                        "return complex tensors for all inputs, and return_complex=False will raise an error."},
        ],
    },
    "torch.scatter": {
        "positional": ["input", "dim", "index", "src"],
        "warnings": [
            # aten/src/ATen/native/TensorAdvancedIndexing.cpp: scatter(dim, index, src: Tensor, reduce=).
            {"when": [["passed", "reduce"], ["tensor", "src"]], "category": "UserWarning",
             "message": "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                        "future PyTorch release. Use torch.scatter_reduce instead for more reduction options."},
        ],
    },
    "torch.meshgrid": {
        "positional": [],
        "varargs": "tensors",
        "keyword_only": ["indexing"],
        "warnings": [
            # aten/src/ATen/native/TensorShape.cpp (meshgrid): TORCH_WARN_ONCE when indexing is not given
            # (torch/functional.py passes indexing=None on), 2.4 … 2.15.
            {"when": [["missing", "indexing"]], "category": "UserWarning",
             "message": "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."},
        ],
    },
    "torch.autograd.Variable": {
        "positional": ["data", "requires_grad", "volatile"],
        "warnings": [
            # torch/csrc/autograd/python_legacy_variable.cpp: a true volatile= warns and is ignored.
            {"when": [["truthy", "volatile"]], "category": "UserWarning",
             "message": "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."},
        ],
    },
}
#: Tensor methods with the same native warnings (the receiver is the ``input`` argument).
NATIVE_METHODS = {"torch.Tensor.stft": "torch.stft", "torch.Tensor.scatter": "torch.scatter",
                  "torch.Tensor.scatter_": "torch.scatter"}


# -- one module ---------------------------------------------------------------------------------------------
def _text(node: ast.AST | None, constants: dict[str, str]) -> str:
    """A message's text; a name bound to a string (``EPOCH_DEPRECATION_WARNING``, ``warning.format(ret)``) read."""
    if isinstance(node, ast.Name):
        return constants.get(node.id, "")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Name):
        return constants.get(node.func.value.id, "")
    return build_api_db._message(node)


def _string_constants(body: list[ast.stmt], into: dict[str, str]) -> dict[str, str]:
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            text = build_api_db._message(statement.value)
            if text:
                into[statement.targets[0].id] = text
    return into


def _warning(call: ast.AST, constants: dict[str, str]) -> tuple[str, str] | None:
    """(message, category) of a ``warnings.warn`` / ``warn_once`` call, else None."""
    if not isinstance(call, ast.Call):
        return None
    name = dotted_name(call.func) or ""
    leaf = name.rsplit(".", 1)[-1]
    if leaf in ("warn", "warn_explicit") and (name in ("warn", "warn_explicit") or "warnings" in name):
        category_node = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "category"), None)
        category = (dotted_name(category_node) or "UserWarning").rsplit(".", 1)[-1] if category_node else "UserWarning"
    elif leaf in ("warn_once", "_warn_once", "warning_once") or leaf.startswith("_warn_"):
        category = "UserWarning"
    else:
        return None
    message = _text(call.args[0] if call.args else None, constants)
    return " ".join(message.split()), category


def _is_change_warning(message: str, category: str) -> bool:
    return category in _DEPRECATION_CATEGORIES or bool(_CHANGE_WORDS.search(message))


def _literal(node: ast.AST):
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return _UNKNOWN
    return value if isinstance(value, (str, int, float, bool, type(None))) else _UNKNOWN


class _Function:
    """What one function says about its parameters: guarded warnings and the calls that pass them on."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool, resolve, class_name,
                 constants: dict[str, str]) -> None:
        arguments = node.args
        self.keyword_only = [arg.arg for arg in arguments.kwonlyargs]
        self.constants = _string_constants(node.body, dict(constants))
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        self.defaults: dict[str, object] = {}
        for arg, default in [*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]:
            self.defaults[arg.arg] = _UNKNOWN if default is None else _literal(default)
        self.required = {arg.arg for arg, default in zip(positional, defaults) if default is None} | {
            arg.arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None}
        decorators = {(dotted_name(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1]
                      for d in node.decorator_list}
        drop_first = is_method and "staticmethod" not in decorators
        self.self_name = positional[0].arg if drop_first and positional else None
        self.positional = [arg.arg for arg in positional][1 if drop_first and positional else 0:]
        self.varargs = arguments.vararg.arg if arguments.vararg else None
        self.resolve = resolve
        self.class_name = class_name
        self.warnings: list[dict] = []
        self.calls: list[dict] = []
        self.attributes: dict[str, str] = {}  # self.X = parameter (in __init__)
        self._assigned: dict[str, int] = {}  # parameter → first line that rebinds it
        # ``drop_on_export = kwargs.pop("drop_on_export", None)``: a keyword read out of ``**kwargs``.
        self.keyword_names: dict[str, str] = {}
        if arguments.kwarg:
            for statement in node.body:
                value = getattr(statement, "value", None)
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                        and isinstance(statement.targets[0], ast.Name) and isinstance(value, ast.Call) \
                        and dotted_name(value.func) in (f"{arguments.kwarg.arg}.pop", f"{arguments.kwarg.arg}.get") \
                        and value.args and isinstance(value.args[0], ast.Constant) \
                        and isinstance(value.args[0].value, str):
                    local = statement.targets[0].id
                    self.keyword_names[local] = value.args[0].value
                    self.defaults[value.args[0].value] = _literal(value.args[1]) if len(value.args) > 1 else None
                    self.keyword_only.append(value.args[0].value)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in self.defaults:
                self._assigned[sub.id] = min(self._assigned.get(sub.id, 10 ** 9), sub.lineno)
        self._body(node.body, [])

    # A condition is a list of atoms, all of which must hold: [kind, parameter, values?].
    def _atom(self, test: ast.expr, line: int):
        """Atoms for one test; None when the test depends on something else; [] when it always holds."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            atoms = []
            for value in test.values:
                part = self._atom(value, line)
                if part is None:
                    return None
                atoms.extend(part)
            return atoms
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _ENVIRONMENT_CHECK.search(
                ast.unparse(test.operand)) and isinstance(test.operand, ast.Call):
            return []  # ``not torch.jit.is_scripting()``: holds in eager user code
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            name = self._parameter(test.operand, line)
            return [["falsy", name]] if name and name != self.varargs else None
        name = self._parameter(test, line)
        if name:
            return [["positional", name]] if name == self.varargs else [["truthy", name]]
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call) \
                and dotted_name(test.left.func) == "len" and len(test.left.args) == 1 \
                and self._parameter(test.left.args[0], line) == self.varargs and self.varargs \
                and isinstance(test.ops[0], (ast.Gt, ast.NotEq)) and _literal(test.comparators[0]) == 0:
            return [["positional", self.varargs]]  # ``if len(args) > 0``
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            name = self._parameter(test.left, line)
            if not name or name == self.varargs:
                return None
            op, right = test.ops[0], test.comparators[0]
            default = self.defaults.get(name, _UNKNOWN)
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                values = [_literal(item) for item in right.elts]
                if _UNKNOWN in values:
                    return None
                return [["equals" if isinstance(op, ast.In) else "differs", name, values]]
            value = _literal(right)
            if value is _UNKNOWN:
                return None
            if isinstance(op, (ast.Is, ast.Eq)):
                if value is None and default is None:
                    return [["missing", name]]
                return [["equals", name, [value]]]
            if isinstance(op, (ast.IsNot, ast.NotEq)):
                if default is not _UNKNOWN and value == default and type(value) is type(default):
                    return [["passed", name]]
                return [["differs", name, [value]]]
        return None

    def _parameter(self, node: ast.expr, line: int) -> str | None:
        """The parameter (or keyword read from ``**kwargs``) a name stands for, while it is not rebound."""
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.keyword_names:
            return self.keyword_names[node.id]
        if (node.id in self.defaults or node.id == self.varargs) and self._assigned.get(node.id, 10 ** 9) > line:
            return node.id
        return None

    def _alternatives(self, test: ast.expr, line: int):
        """Conditions of which any one makes the test hold (``a is not None or b is not None``)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            found = [self._atom(value, line) for value in test.values]
            return [atoms for atoms in found if atoms is not None]
        atoms = self._atom(test, line)
        return [] if atoms is None else [atoms]

    def _negation(self, test: ast.expr, line: int):
        """The condition of the ``else:`` branch, when the test is one atom or an ``or`` of single atoms."""
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        negated = []
        for part in parts:
            atoms = self._atom(part, line)
            if atoms is None or len(atoms) != 1 or atoms[0][0] == "positional":
                return None
            kind, name, *values = atoms[0]
            opposite = {"passed": "missing", "missing": "passed", "truthy": "falsy", "falsy": "truthy",
                        "equals": "differs", "differs": "equals"}[kind]
            negated.append([opposite, name, *values])
        return negated

    def _body(self, body: list[ast.stmt], under: list) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(statement, ast.If):
                for atoms in self._alternatives(statement.test, statement.lineno):
                    self._body(statement.body, under + atoms)
                negated = self._negation(statement.test, statement.lineno)
                if negated is not None:
                    self._body(statement.orelse, under + negated)
                continue
            if isinstance(statement, (ast.With, ast.Try)):
                self._body(statement.body, under)
                continue
            if isinstance(statement, (ast.Return, ast.Raise)):
                self._expression(statement, under)
                break  # what follows runs only when this did not
            self._expression(statement, under)

    def _expression(self, statement: ast.stmt, under: list) -> None:
        if isinstance(statement, ast.Assign) and self.self_name and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == self.self_name and isinstance(statement.value, ast.Name) \
                    and statement.value.id in self.defaults:
                self.attributes.setdefault(target.attr, statement.value.id)
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            found = _warning(node, self.constants)
            if found is not None:
                if _is_change_warning(*found):
                    self.warnings.append({"when": under, "message": found[0], "category": found[1]})
                continue
            callee = self._callee(node.func)
            if callee is None:
                continue
            arguments = {}
            for index, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                arguments[index] = self._argument(arg)
            for keyword in node.keywords:
                if keyword.arg is not None:
                    arguments[keyword.arg] = self._argument(keyword.value)
            self.calls.append({"callee": callee, "under": under, "arguments": arguments,
                               "unpacked": any(isinstance(a, ast.Starred) for a in node.args)
                               or any(k.arg is None for k in node.keywords)})

    def _argument(self, node: ast.expr):
        if isinstance(node, ast.Name) and node.id in self.keyword_names:
            return ["parameter", self.keyword_names[node.id]]
        if isinstance(node, ast.Name) and node.id in self.defaults:
            return ["parameter", node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            return ["attribute", node.attr]
        value = _literal(node)
        return ["value", value] if value is not _UNKNOWN else ["other"]

    def _callee(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
                and dotted_name(func.value.func) == "super" and self.class_name:
            return f"super:{self.class_name}.{func.attr}"
        name = dotted_name(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head == self.self_name and self.class_name and rest and "." not in rest:
            return f"self:{self.class_name}.{rest}"
        return self.resolve(name)

    def record(self) -> dict:
        return {"positional": self.positional, "keyword_only": self.keyword_only, "varargs": self.varargs,
                "defaults": {k: v for k, v in self.defaults.items() if v is not _UNKNOWN},
                "required": sorted(self.required), "warnings": self.warnings, "calls": self.calls,
                "attributes": self.attributes}


def read_module(module: str, tree: ast.Module, is_package: bool) -> dict:
    """Functions and classes of one module, with import resolution for the calls they make."""
    imports: dict[str, str] = {}
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            parts = module.split(".")
            base = parts if is_package else parts[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)

    def resolve(name: str) -> str | None:
        head, _, rest = name.partition(".")
        if head in local:
            return f"{module}.{name}"
        if head in imports:
            return imports[head] + ("." + rest if rest else "")
        return None

    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    constants = _string_constants(tree.body, {})
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = _Function(node, False, resolve, None, constants).record()
        elif isinstance(node, ast.ClassDef):
            bases = [resolve(dotted_name(base) or "") for base in node.bases]
            classes[node.name] = {"bases": [b for b in bases if b], "methods": []}
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions[f"{node.name}.{item.name}"] = _Function(item, True, resolve, f"{module}.{node.name}", constants).record()
                    classes[node.name]["methods"].append(item.name)
    return {"functions": functions, "classes": classes}


def read_wheel(wheel: Path) -> dict:
    modules: dict[str, dict] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            module = build_api_db.module_name(info.filename)
            if module is None or not info.filename.endswith(".py") or module.startswith(_SKIPPED_MODULES):
                continue
            try:
                tree = ast.parse(archive.read(info).decode("utf-8", "replace"))
            except SyntaxError:
                continue
            modules[module] = read_module(module, tree, info.filename.endswith("__init__.py"))
    return modules


def _cached_read(wheel: Path, cache: Path) -> dict:
    target = cache / f"{wheel.name}.warnings.v{READER_VERSION}.json.gz"
    if target.exists():
        return json.loads(gzip.decompress(target.read_bytes()))
    modules = read_wheel(wheel)
    cache.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(json.dumps(modules).encode()))
    return modules


# -- following calls ----------------------------------------------------------------------------------------
def _evaluate(atom: list, argument) -> bool | None:
    """Whether an atom on a callee's parameter holds for a literal argument (None: undecided)."""
    kind, _, *values = atom
    value = argument
    if kind == "missing":
        return value is None
    if kind == "passed":
        return None
    if kind == "truthy":
        return bool(value)
    if kind == "falsy":
        return not value
    if kind == "equals":
        return any(value == v and type(value) is type(v) for v in values[0])
    if kind == "differs":
        return all(not (value == v and type(value) is type(v)) for v in values[0])
    return None


class _Release:
    """All functions of one release, with conditions propagated through calls to a fixpoint."""

    def __init__(self, modules: dict) -> None:
        self.functions: dict[str, dict] = {}
        self.classes: dict[str, dict] = {}
        for module, entry in modules.items():
            for name, record in entry["functions"].items():
                self.functions[f"{module}.{name}"] = record
            for name, record in entry["classes"].items():
                self.classes[f"{module}.{name}"] = record
        self.derived: dict[str, list[dict]] = {qual: list(record["warnings"]) for qual, record in self.functions.items()}

    def method(self, class_qual: str, name: str, seen: frozenset = frozenset()) -> str | None:
        """The definition a class uses for ``name`` (its own or a base's)."""
        if class_qual in seen or class_qual not in self.classes:
            return None
        if name in self.classes[class_qual]["methods"]:
            return f"{class_qual}.{name}"
        for base in self.classes[class_qual]["bases"]:
            found = self.method(base, name, seen | {class_qual})
            if found:
                return found
        return None

    def _target(self, callee: str) -> str | None:
        if callee.startswith("self:"):
            class_qual, _, name = callee[5:].rpartition(".")
            return self.method(class_qual, name)
        if callee.startswith("super:"):
            class_qual, _, name = callee[6:].rpartition(".")
            for base in self.classes.get(class_qual, {}).get("bases", []):
                found = self.method(base, name)
                if found:
                    return found
            return None
        if callee in self.functions:
            return callee
        if callee in self.classes:
            return self.method(callee, "__init__")
        return None

    def propagate(self, rounds: int = 4) -> None:
        for _ in range(rounds):
            changed = False
            for qual, record in self.functions.items():
                for call in record["calls"]:
                    target = self._target(call["callee"])
                    if target is None or target == qual:
                        continue
                    for warning in self.derived.get(target, ()):
                        translated = self._translate(record, self.functions[target], call, warning)
                        if translated is None:
                            continue
                        owner = qual
                        entry = {"when": translated, "message": self._fill(warning["message"], self.functions[target], call),
                                 "category": warning["category"]}
                        if entry not in self.derived.setdefault(owner, []):
                            self.derived[owner].append(entry)
                            changed = True
            if not changed:
                break

    @staticmethod
    def _fill(message: str, callee: dict, call: dict) -> str:
        """``{name}`` in the callee's message, where the call passes a literal for ``name``."""
        for key, argument in call["arguments"].items():
            key = int(key) if isinstance(key, str) and key.isdigit() else key
            name = callee["positional"][key] if isinstance(key, int) and key < len(callee["positional"]) else key
            if argument[0] == "value" and isinstance(argument[1], str):
                message = message.replace("{" + str(name) + "}", argument[1])
        return message

    def _translate(self, caller: dict, callee: dict, call: dict, warning: dict):
        """The callee's condition in terms of the caller's parameters; None when it cannot hold or is unknown."""
        callee_params = callee["positional"]
        by_name: dict[str, list] = {}
        for key, argument in call["arguments"].items():
            key = int(key) if isinstance(key, str) and key.isdigit() else key
            if isinstance(key, int):
                if key < len(callee_params):
                    by_name[callee_params[key]] = argument
                elif callee["varargs"]:
                    by_name.setdefault(callee["varargs"], ["value", True])
            else:
                by_name[key] = argument
        atoms = list(call["under"])
        for atom in warning["when"]:
            name = atom[1]
            argument = by_name.get(name)
            if argument is None:
                if call["unpacked"]:
                    return None
                if atom[0] == "positional":
                    return None  # no *args passed
                default = callee["defaults"].get(name, None) if name in callee["defaults"] else _UNKNOWN
                if atom[0] == "passed":
                    return None
                if default is _UNKNOWN:
                    return None
                held = _evaluate(atom, default)
                if not held:
                    return None
                continue
            if argument[0] == "value":
                held = _evaluate(atom, argument[1])
                if atom[0] == "passed":
                    held = argument[1] != callee["defaults"].get(name, _UNKNOWN)
                if not held:
                    return None
                continue
            if argument[0] == "parameter":
                own = argument[1]
                if atom[0] in ("passed", "missing") and caller["defaults"].get(own, _UNKNOWN) != callee["defaults"].get(
                        name, _UNKNOWN):
                    return None  # a different default: "left out" means something else here
                atoms.append([atom[0], own, *atom[2:]])
                continue
            if argument[0] == "attribute":
                atoms.append(["attribute", argument[1], atom])
                continue
            return None
        return atoms

    def init_attributes(self, init: str, depth: int = 0) -> dict[str, str]:
        """``self.X`` → the ``__init__`` parameter it holds, through ``super().__init__(param, ...)`` calls."""
        record = self.functions[init]
        attributes = dict(record["attributes"])
        if depth > 4:
            return attributes
        for call in record["calls"]:
            if not call["callee"].startswith("super:") or not call["callee"].endswith(".__init__"):
                continue
            base_init = self._target(call["callee"])
            if base_init is None:
                continue
            base = self.functions[base_init]
            passed = {}
            for key, argument in call["arguments"].items():
                key = int(key) if isinstance(key, str) and key.isdigit() else key
                name = base["positional"][key] if isinstance(key, int) and key < len(base["positional"]) else key
                if argument[0] == "parameter":
                    passed[name] = argument[1]
            for attribute, parameter in self.init_attributes(base_init, depth + 1).items():
                if parameter in passed:
                    attributes.setdefault(attribute, passed[parameter])
        return attributes

    def attribute_warnings(self) -> None:
        """``self.dim`` read by a method, set from an ``__init__`` parameter: the class's constructor warns."""
        for class_qual in self.classes:
            init = self.method(class_qual, "__init__")
            if init is None:
                continue
            attributes = self.init_attributes(init)
            own_init = f"{class_qual}.__init__"
            for name in self.classes[class_qual]["methods"]:
                qual = f"{class_qual}.{name}"
                if name == "__init__":
                    continue
                for warning in self.derived.get(qual, ()):
                    atoms = []
                    for atom in warning["when"]:
                        if atom[0] != "attribute":
                            atoms = None
                            break
                        parameter = attributes.get(atom[1])
                        if parameter is None:
                            atoms = None
                            break
                        inner = atom[2]
                        atoms.append([inner[0], parameter, *inner[2:]])
                    if atoms:
                        entry = {"when": atoms, "message": warning["message"], "category": warning["category"],
                                 "on": name}
                        self.derived.setdefault(own_init if own_init in self.functions else init, [])
                        if entry not in self.derived[own_init if own_init in self.functions else init]:
                            self.derived[own_init if own_init in self.functions else init].append(entry)

    @staticmethod
    def simplify(atoms: list) -> list | None:
        """One atom per parameter where possible; None when the atoms contradict each other."""
        by_parameter: dict[str, list] = {}
        for atom in atoms:
            if atom not in by_parameter.setdefault(atom[1], []):
                by_parameter[atom[1]].append(atom)
        kept = []
        for parameter, group in by_parameter.items():
            equals = [a for a in group if a[0] == "equals"]
            if equals:
                values = [v for v in equals[0][2] if all(any(v == w and type(v) is type(w) for w in a[2]) for a in equals)]
                for atom in group:
                    if atom[0] == "differs":
                        values = [v for v in values if not any(v == w and type(v) is type(w) for w in atom[2])]
                if not values:
                    return None
                group = [a for a in group if a[0] not in ("equals", "differs")] + [["equals", parameter, values]]
            kinds = {a[0] for a in group}
            if {"passed", "missing"} <= kinds or {"truthy", "falsy"} <= kinds:
                return None
            kept.extend(group)
        return kept

    def sites(self) -> dict[str, dict]:
        """Definition → parameters and the conditional warnings on them (unconditional ones are TP206's)."""
        found = {}
        for qual, warnings in self.derived.items():
            kept = []
            for warning in warnings:
                if not warning["when"] or any(a[0] == "attribute" for a in warning["when"]) or not warning["message"]:
                    continue
                atoms = self.simplify(warning["when"])
                if atoms and {**warning, "when": atoms} not in kept:
                    kept.append({**warning, "when": atoms})
            if not kept:
                continue
            record = self.functions[qual]
            found[qual] = {"positional": record["positional"], "keyword_only": record["keyword_only"],
                           "varargs": record["varargs"], "defaults": record["defaults"], "warnings": kept}
        return found


def _spellings(api_release: dict) -> dict[str, set[str]]:
    return build_api_db._public_spellings(api_release)


def _classes_inheriting(release: _Release, qual: str) -> list[str]:
    """Classes whose ``__init__`` (or method) resolves to this definition: the class names to spell."""
    class_qual, _, method = qual.rpartition(".")
    return [c for c in release.classes if release.method(c, method) == qual]


def fold(per_release: dict[str, dict], api_releases: dict[str, dict]) -> dict:
    minors = {version: ".".join(version.split(".")[:2]) for version in per_release}
    callables: dict[str, dict] = {}
    versions = list(per_release)
    for version in versions:
        release = _Release(per_release[version])
        release.propagate()
        release.attribute_warnings()
        spellings = _spellings(api_releases[version])
        for qual, site in release.sites().items():
            module_and_class, _, leaf = qual.rpartition(".")
            is_method = module_and_class in release.classes
            if leaf.startswith("_") and leaf != "__init__":
                continue
            names: set[str] = set()
            if is_method:
                for class_qual in _classes_inheriting(release, qual):
                    for public in spellings.get(class_qual, ()):
                        names.add(public if leaf == "__init__" else f"{public}.{leaf}")
            else:
                names |= spellings.get(qual, set())
            for name in names:
                entry = callables.setdefault(name, {"method": is_method and leaf != "__init__", "warnings": []})
                entry["positional"] = site["positional"]
                entry["keyword_only"] = site["keyword_only"]
                entry["varargs"] = site["varargs"]
                entry["defaults"] = site["defaults"]
                for warning in site["warnings"]:
                    key = json.dumps(warning["when"], sort_keys=True)
                    existing = next((w for w in entry["warnings"] if w["key"] == key), None)
                    if existing is None:
                        existing = {"key": key, "when": warning["when"], "since": minors[version], "releases": []}
                        entry["warnings"].append(existing)
                    existing["message"] = warning["message"]
                    existing["category"] = warning["category"]
                    if warning.get("on"):
                        existing["on"] = warning["on"]
                    if minors[version] not in existing["releases"]:
                        existing["releases"].append(minors[version])
    newest = minors[versions[-1]]
    for name, site in NATIVE_SITES.items():
        for spelled in [name, *(method for method, function in NATIVE_METHODS.items() if function == name)]:
            is_method = spelled != name
            positional = site["positional"][1:] if is_method else site["positional"]
            callables[spelled] = {"method": is_method, "positional": positional,
                                  "keyword_only": site.get("keyword_only", []), "varargs": site.get("varargs"),
                                  "defaults": {},
                                  "native": True, "warnings": [
                                      {**w, "key": "", "since": minors[versions[0]], "releases": [newest]}
                                      for w in site["warnings"]]}
    for entry in callables.values():
        for warning in entry["warnings"]:
            del warning["key"]
            # The first release after the last that warns (None: still warns in the newest).
            last = warning["releases"][-1]
            warning["until"] = None if last == newest else minors[versions[[minors[v] for v in versions].index(last) + 1]]
            del warning["releases"]
    return {"reader": READER_VERSION, "releases": [minors[v] for v in versions],
            "callables": {name: callables[name] for name in sorted(callables)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder with torch-X.Y.Z-*.whl")
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / "bench" / ".cache" / "api_db")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    wheels = {}
    for version in build_api_db.RELEASES:
        wheel = build_api_db.wheel_for(args.wheels, version)
        if wheel is None:
            print(f"error: no wheel for torch {version} in {args.wheels}", file=sys.stderr)
            return 2
        wheels[version] = wheel
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        mined = dict(zip(wheels, pool.map(_cached_read, wheels.values(), [args.cache] * len(wheels))))
        api = dict(zip(wheels, pool.map(build_api_db._cached_read, wheels.values(), [args.cache] * len(wheels))))
    data = fold(mined, api)
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    args.output.write_bytes(gzip.compress(payload, mtime=0))
    count = sum(len(entry["warnings"]) for entry in data["callables"].values())
    print(f"{args.output}: {len(data['callables'])} callables, {count} guarded warnings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
