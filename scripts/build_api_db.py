"""Build torchpatch's API-evolution database from the real PyTorch wheels (maintainer script).

For each release this reads the Python sources (``.py`` and ``.pyi``) straight out of the PyPI wheel —
never importing them — and records: every module, its module-level names (definitions, imports,
star imports followed, ``__all__``), whether the module is *open* (a module ``__getattr__``, a
``sys.modules`` replacement or ``globals()`` writes can serve names no static reading sees), public
classes with their public methods and properties, function signatures (positional-only, keyword-only,
defaults) and deprecation sites with torch's own message (``warnings.warn`` with a deprecation
category or wording, ``@deprecated`` / ``typing_extensions.deprecated``, warnings in a module
``__getattr__`` shim, a module that warns on import, keywords whose non-default value warns).

The releases are then folded into one compact file, ``src/torchpatch/rules/data/api_db.json.gz``:
only what *changes* between 2.4 and the newest release is kept (names that appear or disappear,
deprecations, signature changes), with the replacement of a moved name when the older release
imported it from a place the newer one still has.

    python scripts/build_api_db.py --wheels /work/wheels            # all releases in RELEASES
    python scripts/build_api_db.py --wheels DIR --download           # fetch missing wheels first

Adding a release (2.16): append it to RELEASES, run with --download, run the tests
(tests/test_api_db.py checks the result against the installed torch), commit the data file.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import re
import subprocess
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from torchpatch.syntax import dotted_name as _dotted

#: The newest patch release of each minor release (the one the database describes).
RELEASES = ["2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0",
            "2.14.1", "2.15.0"]
#: Wheels before 2.7 are tagged manylinux1; later ones manylinux_2_28.
_PLATFORMS = {"2.4.1": "manylinux1_x86_64", "2.5.1": "manylinux1_x86_64", "2.6.0": "manylinux1_x86_64"}

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "torchpatch" / "rules" / "data" / "api_db.json.gz"
#: What ``from M import *`` binds, per public module and release (read by the engine for star imports only).
STAR_OUTPUT = OUTPUT.with_name("star_exports.json.gz")

_DEPRECATION_CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}
_DEPRECATION_WORDS = re.compile(r"deprecat|will be removed|no longer supported|has been removed", re.I)
_MAX_DEFAULT = 40
_SAFE_GETATTR_NAMES = frozenset({"AttributeError", "__name__", "globals", "getattr", "str", "isinstance",
                                 "ImportError", "ModuleNotFoundError", "DeprecationWarning", "FutureWarning",
                                 "UserWarning", "importlib", "warnings", "sys"})
#: Bump when read_release changes what it records (the per-wheel cache is keyed on it).
READER_VERSION = 7


# -- reading one release ---------------------------------------------------------------------------------
def module_name(path: str) -> str | None:
    if not path.startswith("torch/") or not path.endswith((".py", ".pyi")):
        return None
    stem = path.rsplit(".", 1)[0]
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if any(not part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _is_public(name: str) -> bool:
    return not name.startswith("_")


def _public_module(module: str) -> bool:
    return all(_is_public(part) for part in module.split("."))


def _message(node: ast.AST | None) -> str:
    """A warning's text, with f-string holes as {…}."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _message(node.left) + (_message(node.right) if isinstance(node.op, ast.Add) else "")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _message(node.func.value)
    return ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _warn_call(node: ast.AST) -> str | None:
    """The message when ``node`` is a call that warns about a deprecation, else None."""
    if not isinstance(node, ast.Call):
        return None
    name = _dotted(node.func) or ""
    leaf = name.rsplit(".", 1)[-1]
    if leaf in ("warn", "warn_explicit") and (name in ("warn", "warn_explicit") or "warnings" in name):
        message = _message(node.args[0] if node.args else None)
        category = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "category"), None)
        category_name = (_dotted(category) or "").rsplit(".", 1)[-1] if category is not None else "UserWarning"
        if category_name in _DEPRECATION_CATEGORIES and (category_name == "DeprecationWarning"
                                                         or _DEPRECATION_WORDS.search(message)):
            return _shorten(message) or "deprecated"
        if category_name == "UserWarning" and _DEPRECATION_WORDS.search(message):
            return _shorten(message)
        return None
    if leaf in ("warn_once", "_warn_once", "warning_once") and node.args:
        message = _message(node.args[0])
        if _DEPRECATION_WORDS.search(message):
            return _shorten(message)
    return None


def _deprecated_decorator(decorators: list[ast.expr]) -> str | None:
    names = {(_dotted(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] for d in decorators}
    if "overload" in names:
        return None  # one overload deprecated (flex_attention's return_lse=): not the function
    for decorator in decorators:
        call = decorator if isinstance(decorator, ast.Call) else None
        name = _dotted(call.func if call else decorator) or ""
        if name.rsplit(".", 1)[-1] == "deprecated":
            if call is None or not call.args:
                return "deprecated"
            texts = [_message(arg) for arg in call.args]
            # torch.onnx's own helper: deprecated(since, removed_in, instructions)
            if len(texts) >= 3 and re.fullmatch(r"\d+\.\d+(\.\d+)?", texts[0] or ""):
                return _shorten(f"deprecated since {texts[0]}, removed in {texts[1]}; {texts[2]}")
            return _shorten(texts[0]) or "deprecated"
    return None


def _unconditional_warning(body: list[ast.stmt], helpers: dict[str, str] | None = None) -> str | None:
    """A deprecation warned on every call: at the top level of the body (or in a plain ``with``).

    ``helpers``: this module's functions that always warn (torch.distributed.nn.functional's
    ``_deprecated(name, suggestion)``); a call to one counts, with its first string argument as ``{name}``.
    """
    for statement in body:
        if isinstance(statement, ast.Expr):
            message = _warn_call(statement.value)
            if message:
                return message
            call = statement.value
            if helpers and isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in helpers:
                text = helpers[call.func.id]
                names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                for index, placeholder in enumerate(re.findall(r"\{(\w+)\}", text)):
                    if index < len(names):
                        text = text.replace("{" + placeholder + "}", names[index], 1)
                return text
        elif isinstance(statement, ast.With):
            message = _unconditional_warning(statement.body, helpers)
            if message:
                return message
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (_dotted(test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _literal_strings(node: ast.AST | None) -> set[str] | None:
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items = node.elts
    elif isinstance(node, ast.Dict):
        items = node.keys
    else:
        return None
    if all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items):
        return {item.value for item in items}
    return None


def _signature(arguments: ast.arguments, drop_self: bool) -> list:
    params: list = []
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "p" if index < len(arguments.posonlyargs) else "n"
        params.append([arg.arg, kind, _default(default)])
    if arguments.vararg:
        params.append([arguments.vararg.arg, "*", None])
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append([arg.arg, "k", _default(default)])
    if arguments.kwarg:
        params.append([arguments.kwarg.arg, "**", None])
    if drop_self and params and params[0][1] in "pn":
        params = params[1:]
    return params


def _default(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= _MAX_DEFAULT else "…"


def _keyword_warnings(function: ast.FunctionDef | ast.AsyncFunctionDef, signature: list) -> dict[str, str]:
    """Keywords whose non-default value warns: ``if p is not None: warn(...)``, ``if p != default: warn``."""
    defaults = {name: default for name, kind, default in signature if kind in "nk" and default is not None}
    found: dict[str, str] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.If):
            continue
        message = _unconditional_warning(node.body)
        if not message:
            continue
        names = _params_tested_against_default(node.test, defaults)
        for name in names or ():
            found.setdefault(name, message)
    return found


def _params_tested_against_default(test: ast.expr, defaults: dict[str, str]) -> list[str] | None:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        names = []
        for value in test.values:
            part = _params_tested_against_default(value, defaults)
            if part is None:
                return None
            names.extend(part)
        return names
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.IsNot, ast.NotEq)) \
            and isinstance(test.left, ast.Name) and test.left.id in defaults:
        if ast.unparse(test.comparators[0]) == defaults[test.left.id]:
            return [test.left.id]
    return None


class _ModuleReader:
    def __init__(self, module: str, tree: ast.Module, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.names: dict[str, str] = {}  # local name -> "def" | "class" | "value" | "import:<qualname>" | "export:<qualname>" (star) | "module:<m>"
        self.stars: list[str] = []
        self.all: list[str] | None = None
        self.open = False
        self.getattr_strings: list[str] = []
        self.getattr_deprecations: dict[str, str] = {}
        self.module_warning: str | None = None
        self.classes: dict[str, dict] = {}
        self.functions: dict[str, list] = {}
        self.deprecated: dict[str, str] = {}
        self.keyword_deprecated: dict[str, dict[str, str]] = {}
        self.aliases: list[str] = []  # modules this one registers in sys.modules
        self.literal_strings: dict[str, set[str]] = {}  # module-level set/list/tuple/dict literals of strings
        self.helpers: dict[str, str] = {}  # private functions that always warn a deprecation
        self._getattr_reads: set[str] | None = None
        self._read(tree.body, top=True)
        self._close_getattr()

    def _resolve_from(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.module.split(".")
        base = parts if self.is_package else parts[:-1]
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def _read(self, body: list[ast.stmt], top: bool) -> None:
        for statement in body:
            self._statement(statement, top)

    def _statement(self, node: ast.stmt, top: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.names[node.name] = "def"
            if not _is_public(node.name) and node.name != "__getattr__":
                helper_message = _unconditional_warning(node.body)
                if helper_message:
                    self.helpers[node.name] = helper_message
            if node.name == "__getattr__":
                self._getattr_shim(node)
                return
            if _is_public(node.name):
                signature = _signature(node.args, drop_self=False)
                # Overloads and conditional definitions: no single signature to compare.
                self.functions[node.name] = None if node.name in self.functions else signature
                message = _deprecated_decorator(node.decorator_list) or _unconditional_warning(node.body, self.helpers)
                if message:
                    self.deprecated[node.name] = message
                keywords = _keyword_warnings(node, signature) if self.functions[node.name] else {}
                if keywords:
                    self.keyword_deprecated[node.name] = keywords
        elif isinstance(node, ast.ClassDef):
            self.names[node.name] = "class"
            if _is_public(node.name):
                self._class(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.names[alias.asname] = "module:" + alias.name
                else:
                    root = alias.name.split(".")[0]
                    self.names.setdefault(root, "module:" + root)
        elif isinstance(node, ast.ImportFrom):
            source = self._resolve_from(node)
            for alias in node.names:
                if alias.name == "*":
                    self.stars.append(source)
                else:
                    self.names[alias.asname or alias.name] = f"import:{source}.{alias.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name_node in ast.walk(target):
                    if isinstance(name_node, ast.Name):
                        self.names.setdefault(name_node.id, "value")
                        if name_node.id == "__all__":
                            self._all(node)
                        strings = _literal_strings(getattr(node, "value", None))
                        if strings is not None:
                            self.literal_strings[name_node.id] = strings
                    elif isinstance(name_node, ast.Subscript) and self._dynamic_target(name_node):
                        self.open = self.dynamic = True
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            self._read(node.orelse, top=False)  # names imported for type checkers do not exist at run time
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(node).__name__ == "TryStar":
            if isinstance(node, ast.For):
                for name_node in ast.walk(node.target):
                    if isinstance(name_node, ast.Name):
                        self.names.setdefault(name_node.id, "value")
            for field in ("body", "orelse", "finalbody"):
                self._read(getattr(node, field, []) or [], top=False)
            for handler in getattr(node, "handlers", []):
                self._read(handler.body, top=False)
            if top and isinstance(node, ast.If):
                pass
        elif isinstance(node, ast.Delete):
            if top:
                for target in node.targets:
                    if isinstance(target, ast.Name) and self.names.get(target.id) in ("value", "def", "class"):
                        del self.names[target.id]
        elif isinstance(node, ast.Expr):
            if top:
                message = _warn_call(node.value)
                if message:
                    self.module_warning = message
            if isinstance(node.value, ast.Call):
                name = _dotted(node.value.func) or ""
                if name.endswith("__all__.extend") or name.endswith("__all__.append") or name.endswith(
                        "__all__.__iadd__"):
                    for arg in node.value.args:
                        for item in ast.walk(arg):
                            if isinstance(item, ast.Constant) and isinstance(item.value, str) and self.all is not None:
                                self.all.append(item.value)
                elif name in ("globals().update", "setattr") or name.endswith(".update") and "globals" in ast.unparse(
                        node.value.func):
                    self.open = self.dynamic = True
        # Writes anywhere in the module that can add attributes no static reading sees.
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
            if isinstance(sub, ast.Subscript) and isinstance(getattr(sub, "ctx", None), ast.Store) \
                    and self._dynamic_target(sub):
                self.open = self.dynamic = True

    def _dynamic_target(self, node: ast.Subscript) -> bool:
        text = ast.unparse(node.value)
        if text == "globals()":
            return True
        if text == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.aliases.append(key.value)
                return False
            if isinstance(key, ast.Name) and key.id == "__name__":
                return True
            if isinstance(key, ast.JoinedStr):
                prefix = _message(key).split("{", 1)[0]
                if prefix.startswith("torch.") and prefix.count(".") >= 2:
                    self.aliases.append(prefix + "*")
                elif prefix.startswith("{__name__}") or not prefix:
                    self.open = self.dynamic = True
            return False
        return False

    def _all(self, node: ast.stmt) -> None:
        value = getattr(node, "value", None)
        names = []
        if isinstance(value, (ast.List, ast.Tuple)):
            for item in value.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    names.append(item.value)
        if isinstance(node, ast.AugAssign) and self.all is not None:
            self.all.extend(names)
        elif names or isinstance(value, (ast.List, ast.Tuple)):
            self.all = names

    def _close_getattr(self) -> None:
        """A ``__getattr__`` that ends in ``raise`` and reads only literal tables serves exactly their names.

        torch's own (``_lazy_modules``, ``_deprecated_attrs``, ``"set_vital"``) is such a shim; one that calls
        a module function to build its answer (torch.utils.mkldnn in 2.14) leaves the module open.
        """
        reads = self._getattr_reads
        if reads is None:
            return
        served = set(self.getattr_strings)
        for name in reads:
            if name in self.literal_strings:
                served |= self.literal_strings[name]
            elif self.names.get(name, "").startswith("module:") or name in _SAFE_GETATTR_NAMES:
                continue
            elif name in self.names:
                return  # a function or another object decides what is served: stay open
        self.getattr_strings = sorted(served)
        self.getattr_closed = True

    def _getattr_shim(self, node: ast.FunctionDef) -> None:
        self.open = True
        local = {arg.arg for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local |= {(a.asname or a.name).split(".")[0] for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))
                  for a in n.names}
        if node.body and isinstance(node.body[-1], ast.Raise):
            self._getattr_reads = {n.id for statement in node.body for n in ast.walk(statement)
                                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local}
        strings = sorted({n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                          and n.value.isidentifier()})
        self.getattr_strings = strings
        for sub in ast.walk(node):
            if isinstance(sub, ast.If):
                message = _unconditional_warning(sub.body)
                if not message:
                    continue
                served = sorted({n.value for n in ast.walk(sub.test) if isinstance(n, ast.Constant)
                                 and isinstance(n.value, str) and n.value.isidentifier()})
                for name in served:
                    self.getattr_deprecations[name] = message

    def _class(self, node: ast.ClassDef) -> None:
        members: dict[str, str] = {}
        deprecated: dict[str, str] = {}
        keyword_deprecated: dict[str, dict[str, str]] = {}
        signatures: dict[str, list] = {}
        message = _deprecated_decorator(node.decorator_list)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorators = {(_dotted(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1]
                              for d in item.decorator_list}
                is_property = "property" in decorators or "cached_property" in decorators
                if not (is_property or decorators & {"setter", "deleter"}) and item.name in members \
                        and members[item.name] == "property":
                    continue
                if decorators & {"setter", "deleter"}:
                    continue
                kind = "property" if is_property else "method"
                if item.name == "__init__" or item.name == "__new__" and "__init__" not in signatures:
                    signatures["__init__"] = None if "__init__" in signatures else _signature(item.args, drop_self=True)
                    init_message = _deprecated_decorator(item.decorator_list) or _unconditional_warning(item.body)
                    if init_message and not message:
                        message = init_message
                    keywords = _keyword_warnings(item, signatures["__init__"] or [])
                    if keywords:
                        keyword_deprecated["__init__"] = keywords
                if not _is_public(item.name):
                    continue
                members[item.name] = kind
                if kind == "method":
                    drop = "staticmethod" not in decorators
                    signature = _signature(item.args, drop_self=drop)
                    signatures[item.name] = None if item.name in signatures else signature
                    keywords = _keyword_warnings(item, signatures[item.name] or [])
                    if keywords:
                        keyword_deprecated[item.name] = keywords
                member_message = _deprecated_decorator(item.decorator_list) or _unconditional_warning(item.body)
                if member_message:
                    deprecated[item.name] = member_message
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                for target in targets:
                    if isinstance(target, ast.Name) and _is_public(target.id):
                        members.setdefault(target.id, "attribute")
        self.classes[node.name] = {
            "bases": [b for b in (_dotted(base) for base in node.bases) if b],
            "members": members,
        }
        if message:
            self.deprecated[node.name] = message
        for name, member_message in deprecated.items():
            self.deprecated[f"{node.name}.{name}"] = member_message
        for name, keywords in keyword_deprecated.items():
            self.keyword_deprecated[f"{node.name}.{name}"] = keywords
        for name, signature in signatures.items():
            self.functions[f"{node.name}.{name}"] = signature


def read_release(wheel: Path) -> dict:
    """Everything the database needs from one wheel."""
    modules: dict[str, _ModuleReader] = {}
    stub_names: dict[str, set[str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            module = module_name(info.filename)
            if module is None:
                continue
            text = archive.read(info).decode("utf-8", "replace")
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            is_package = info.filename.endswith(("__init__.py", "__init__.pyi"))
            reader = _ModuleReader(module, tree, is_package)
            if info.filename.endswith(".pyi"):
                stub_names[module] = {name for name, kind in reader.names.items() if kind in ("def", "class", "value")}
                if module in modules:
                    continue
                reader.stub_only = True
            elif module in modules and getattr(modules[module], "stub_only", False):
                pass
            modules[module] = reader
    for module, names in stub_names.items():
        for name in names:
            modules[module].names.setdefault(name, "value")
    # torch's namespace is filled at import from torch._C._VariableFunctions (every op), the sym_*
    # helpers and the dtypes of torch._C (torch/__init__.py's globals() loops): with those stubs'
    # names merged in, the top-level module is read as closed.
    if "torch" in modules:
        torch_module = modules["torch"]
        for source in ("torch._C._VariableFunctions", "torch._C"):
            for name, kind in (modules[source].names.items() if source in modules else ()):
                if not name.startswith("__") and kind in ("def", "class", "value"):
                    torch_module.names.setdefault(name, "value")
        torch_module.open = bool(torch_module.getattr_strings) and not getattr(torch_module, "getattr_closed", False)
    _follow_stars(modules)
    aliases = sorted({alias for reader in modules.values() for alias in reader.aliases})
    release: dict = {"modules": {}, "aliases": aliases}
    for module, reader in sorted(modules.items()):
        entry: dict = {}
        names = {name: kind for name, kind in reader.names.items() if _is_public(name)}
        entry["names"] = names
        if reader.is_package:
            entry["package"] = True
        if reader.all is not None:
            entry["all"] = sorted(set(reader.all))
        if getattr(reader, "getattr_closed", False) and module != "torch":
            reader.open = reader.open and _opened_otherwise(reader)
        if reader.open:
            entry["open"] = True
        if reader.getattr_strings:
            entry["getattr"] = reader.getattr_strings
        if reader.module_warning:
            entry["warns"] = reader.module_warning
        if reader.getattr_deprecations:
            entry["getattr_deprecated"] = reader.getattr_deprecations
        if not module.startswith(("torch._inductor", "torch._dynamo", "torch.testing._internal", "torch._vendor")):
            entry["classes"] = reader.classes
            entry["functions"] = reader.functions
            entry["deprecated"] = reader.deprecated
            entry["keyword_deprecated"] = reader.keyword_deprecated
        release["modules"][module] = entry
    return release


def _opened_otherwise(reader: _ModuleReader) -> bool:
    """Whether something besides a closed ``__getattr__`` opened the module (globals(), sys.modules, stars)."""
    return getattr(reader, "dynamic", False)


def _follow_stars(modules: dict[str, _ModuleReader]) -> None:
    """``from m import *`` brings m's ``__all__`` (or its public names); unknown sources open the module."""
    done: set[str] = set()

    def visit(module: str, stack: tuple[str, ...]) -> None:
        if module in done or module in stack:
            return
        reader = modules[module]
        for source in reader.stars:
            if source not in modules:
                reader.open = reader.dynamic = True
                continue
            visit(source, (*stack, module))
            origin = modules[source]
            exported = origin.all if origin.all is not None else [n for n in origin.names if _is_public(n)]
            for name in exported:
                reader.names.setdefault(name, f"export:{source}.{name}")  # a star re-export
            if origin.open and origin.all is None:
                reader.open = reader.dynamic = True
        done.add(module)

    for module in list(modules):
        visit(module, ())


def star_exports(results: dict[str, dict]) -> dict:
    """``from M import *`` binds ``__all__`` when M has one, else its public names (imports included); per
    public module, the names grouped by the releases (a bit mask over RELEASES) that export them."""
    modules: dict[str, dict[str, int]] = {}
    for bit, version in enumerate(RELEASES):
        for module, entry in results[version]["modules"].items():
            if not _public_module(module):
                continue
            names = entry["all"] if "all" in entry else entry["names"]
            masks = modules.setdefault(module, {})
            for name in names:
                if _is_public(name):
                    masks[name] = masks.get(name, 0) | 1 << bit
    grouped: dict[str, dict[str, str]] = {}
    for module, masks in sorted(modules.items()):
        by_mask: dict[int, list[str]] = {}
        for name, mask in masks.items():
            by_mask.setdefault(mask, []).append(name)
        if by_mask:
            grouped[module] = {str(mask): " ".join(sorted(names)) for mask, names in sorted(by_mask.items())}
    return {"releases": [".".join(v.split(".")[:2]) for v in RELEASES], "modules": grouped}


# -- folding the releases into changes -------------------------------------------------------------------
def _served(release: dict, qualname: str) -> bool | None:
    """Whether a release has ``qualname`` (True), certainly lacks it (False), or cannot say (None)."""
    modules = release["modules"]
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            break
    else:
        return False
    rest = parts[cut:]
    if not rest:
        return True
    if _aliased(release, ".".join(parts[: cut + 1])):
        return True
    entry = modules[module]
    name = rest[0]
    kind = entry["names"].get(name)
    if kind is None:
        if name in entry.get("getattr", ()):
            return True  # served by the module's __getattr__
        if entry.get("open"):
            return None
        return False
    if len(rest) == 1:
        return True
    # A class member.
    if kind == "class" and len(rest) == 2:
        members = _class_members(release, module, name, set())
        if members is None:
            return None
        return rest[1] in members or None
    return None


def _aliased(release: dict, module: str) -> bool:
    for alias in release["aliases"]:
        if alias == module or alias.endswith("*") and module.startswith(alias[:-1]):
            return True
    return False


def _class_members(release: dict, module: str, name: str, seen: set) -> set[str] | None:
    """Public members of a class with its bases (None when a base cannot be read)."""
    key = f"{module}.{name}"
    if key in seen:
        return set()
    seen.add(key)
    entry = release["modules"].get(module, {})
    cls = entry.get("classes", {}).get(name)
    if cls is None:
        return None
    members = set(cls["members"])
    for base in cls["bases"]:
        target = _resolve_in_module(release, module, base)
        if target is None:
            if base in ("object", "Exception", "RuntimeError", "Enum", "IntEnum", "NamedTuple", "Protocol",
                        "ABC", "Generic", "TypedDict", "dict", "list", "tuple", "str", "int"):
                continue
            return None
        base_module, _, base_name = target.rpartition(".")
        inherited = _class_members(release, base_module, base_name, seen)
        if inherited is None:
            return None
        members |= inherited
    return members


def _resolve_in_module(release: dict, module: str, dotted: str) -> str | None:
    """Follow imports to the defining module of ``dotted`` as written in ``module``."""
    modules = release["modules"]
    head, _, tail = dotted.partition(".")
    kind = modules.get(module, {}).get("names", {}).get(head)
    if kind is None:
        if dotted.startswith("torch.") and dotted.rpartition(".")[0] in modules:
            return _follow(release, dotted.rpartition(".")[0], dotted.rpartition(".")[2], 0)
        return None
    if kind == "class" and not tail:
        return f"{module}.{head}"
    if kind.startswith(("import:", "export:")):
        target = kind[7:] + ("." + tail if tail else "")
    elif kind.startswith("module:"):
        target = kind[7:] + ("." + tail if tail else "")
    else:
        return None
    parent, _, leaf = target.rpartition(".")
    if parent in modules:
        return _follow(release, parent, leaf, 0)
    return None


def _follow(release: dict, module: str, name: str, depth: int) -> str | None:
    if depth > 10:
        return None
    kind = release["modules"].get(module, {}).get("names", {}).get(name)
    if kind == "class":
        return f"{module}.{name}"
    if kind and kind.startswith(("import:", "export:")):
        parent, _, leaf = kind[7:].rpartition(".")
        if parent in release["modules"]:
            return _follow(release, parent, leaf, depth + 1)
    return None


def _origin(release: dict, module: str, name: str) -> str | None:
    """Where ``module.name`` is defined (following imports), as a qualified name."""
    seen = 0
    while seen < 10:
        kind = release["modules"].get(module, {}).get("names", {}).get(name)
        if kind is None:
            return None
        if not kind.startswith(("import:", "export:")):
            return f"{module}.{name}"
        module, _, name = kind[7:].rpartition(".")
        seen += 1
    return None


def _public_path_for(release: dict, origin: str, exclude: str) -> str | None:
    """A public name in ``release`` whose origin is ``origin`` (the shortest), other than ``exclude``."""
    best = None
    for module, entry in release["modules"].items():
        if not _public_module(module):
            continue
        for name, kind in entry["names"].items():
            qual = f"{module}.{name}"
            if qual == exclude:
                continue
            if kind.startswith(("import:", "export:")) and kind[7:] == origin or qual == origin:
                if best is None or (qual.count("."), len(qual)) < (best.count("."), len(best)):
                    best = qual
    return best


def fold(releases: dict[str, dict]) -> dict:
    versions = list(releases)
    minor = [".".join(v.split(".")[:2]) for v in versions]
    data: dict = {"releases": minor, "removed": {}, "removed_modules": {}, "deprecated": {},
                  "keywords": {}}
    # Modules: removed when an earlier release had it as a file and a later one has no file or alias.
    for index in range(1, len(versions)):
        old, new = releases[versions[index - 1]], releases[versions[index]]
        for module in old["modules"]:
            if module in new["modules"] or _aliased(new, module):
                continue
            parent = module.rpartition(".")[0]
            if parent in new["modules"] and new["modules"][parent].get("open") and module.rpartition(".")[2] in \
                    new["modules"][parent].get("getattr", []):
                continue
            if parent in new["modules"] and module.rpartition(".")[2] in new["modules"][parent]["names"]:
                continue  # now an attribute of the parent (a class or an alias): imports may fail, attribute use works
            data["removed_modules"].setdefault(module, minor[index])
    # Names and class members of public modules.
    for index in range(1, len(versions)):
        old, new = releases[versions[index - 1]], releases[versions[index]]
        for module, entry in old["modules"].items():
            if not _public_module(module) or module in data["removed_modules"]:
                continue
            for name, kind in entry["names"].items():
                if not _is_public(name) or not _is_api(entry, module, name, kind):
                    continue  # an incidental import (typing, another torch helper), not this module's API
                qual = f"{module}.{name}"
                if qual in data["removed"]:
                    continue
                if _served(new, qual) is False:
                    origin = _origin(old, module, name)
                    replacement = _public_path_for(new, origin, qual) if origin else None
                    if replacement is None and origin and _served(new, origin):
                        replacement = origin if _public_module(origin.rpartition(".")[0]) else None
                    data["removed"][qual] = [minor[index], replacement]
                elif kind == "class":
                    # Members the class itself defines (inherited ones are reported on their own class).
                    own = old["modules"][module].get("classes", {}).get(name)
                    old_members = {m for m in own["members"] if _is_public(m)} if own else None
                    new_members = _class_members(new, module, name, set()) if _served(new, qual) else None
                    if old_members is None or new_members is None:
                        continue
                    for member in sorted(old_members - new_members):
                        data["removed"].setdefault(f"{qual}.{member}", [minor[index], None])
    # A name that comes back later: the release that serves it again ends the removal.
    for qual, record in data["removed"].items():
        start = minor.index(record[0])
        back = next((minor[i] for i in range(start + 1, len(versions))
                     if _served(releases[versions[i]], qual) is not False), None)
        record.append(back)
        record.append(next((minor[i] for i in range(len(versions)) if _served(releases[versions[i]], qual)), None))
    for module, release in list(data["removed_modules"].items()):
        start = minor.index(release)
        if any(module in releases[versions[i]]["modules"] for i in range(start + 1, len(versions))):
            del data["removed_modules"][module]
            continue
        first = next(minor[i] for i in range(len(versions)) if module in releases[versions[i]]["modules"])
        # A private module that became public under the same name (checkpoint._hf_storage → hf_storage).
        parent, _, leaf = module.rpartition(".")
        public = f"{parent}.{leaf.lstrip('_')}"
        replacement = public if leaf.startswith("_") and public in releases[versions[-1]]["modules"] else None
        data["removed_modules"][module] = [release, first, replacement]
    # Deprecations: every public spelling of a site, the first release that warns, the newest message.
    spellings = {version: _public_spellings(release) for version, release in releases.items()}
    for index, version in enumerate(versions):
        release = releases[version]
        for module, entry in release["modules"].items():
            sites = dict(entry.get("deprecated", {}))
            for name, message in entry.get("getattr_deprecated", {}).items():
                sites[name] = message
            for site, message in sites.items():
                head, _, member = site.partition(".")
                kind = "member" if member else {"class": "class", "def": "function"}.get(
                    entry["names"].get(head, ""), "name")
                for public in spellings[version].get(f"{module}.{head}", ()):
                    qual = public + ("." + member if member else "")
                    record = data["deprecated"].setdefault(qual, [minor[index], message, kind])
                    record[1] = message
            if entry.get("warns") and _public_module(module):
                record = data["deprecated"].setdefault(module, [minor[index], entry["warns"], "module"])
                record[1] = entry["warns"]
    # Deprecations that stopped warning (undeprecated) are dropped unless the name is gone: the newest
    # release decides.
    newest_version = versions[-1]
    still_warning = set()
    for module, entry in releases[newest_version]["modules"].items():
        sites = {*entry.get("deprecated", {}), *entry.get("getattr_deprecated", {})}
        for site in sites:
            head, _, member = site.partition(".")
            for public in spellings[newest_version].get(f"{module}.{head}", ()):
                still_warning.add(public + ("." + member if member else ""))
        if entry.get("warns"):
            still_warning.add(module)
    for qual in list(data["deprecated"]):
        if qual not in still_warning and qual not in data["removed"] and qual not in data["removed_modules"]:
            del data["deprecated"][qual]
    # Keywords: removed, became keyword-only, default changed, non-default value deprecated.
    for index in range(1, len(versions)):
        old, new = releases[versions[index - 1]], releases[versions[index]]
        found: dict = {}
        for module, entry in old["modules"].items():
            new_entry = new["modules"].get(module)
            if new_entry is None or "functions" not in new_entry or "functions" not in entry:
                continue
            for function, old_signature in entry["functions"].items():
                new_signature = new_entry["functions"].get(function)
                if new_signature is not None and old_signature is not None:
                    _compare(found, f"{module}.{function}", old_signature, new_signature, minor[index])
        for earlier in range(index + 1):  # a keyword that warns from the first release on counts from there
            for module, entry in releases[versions[earlier]]["modules"].items():
                for function, keywords in entry.get("keyword_deprecated", {}).items():
                    if f"{module}.{function}" not in new["modules"].get(module, {}).get("keyword_deprecated", {}) \
                            and function not in new["modules"].get(module, {}).get("keyword_deprecated", {}):
                        continue
                    for keyword, message in keywords.items():
                        found.setdefault(f"{module}.{function}", {}).setdefault(keyword, {}).setdefault(
                            "deprecated", [minor[earlier], message])
        newest = releases[versions[-1]]["modules"]
        for site, changes in found.items():
            module, head, member = _split_site(new, site)
            function = head + ("." + member if member else "")
            latest = newest.get(module, {}).get("functions", {}).get(function)
            latest_kinds = {p[0]: p[1] for p in latest or ()}
            for keyword, change in changes.items():
                if latest is None or keyword in latest_kinds:
                    change.pop("removed", None)  # gone with its function, or back again
                if latest is None or latest_kinds.get(keyword) != "k":
                    change.pop("keyword_only", None)
            changes = {k: c for k, c in changes.items() if c}
            for public in spellings[versions[index]].get(f"{module}.{head}", ()):
                qual = public + ("." + member if member else "")
                store = data["keywords"].setdefault(qual, {})
                for keyword, change in changes.items():
                    target = store.setdefault(keyword, {})
                    for kind, value in change.items():
                        if kind == "defaults":
                            target.setdefault("defaults", []).extend(value)
                        else:
                            target.setdefault(kind, value)
    return data


def _split_site(release: dict, site: str) -> tuple[str, str, str]:
    """``module.Class.method`` → (module, Class, method); ``module.function`` → (module, function, "")."""
    parts = site.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in release["modules"]:
            rest = parts[cut:]
            return module, rest[0], ".".join(rest[1:])
    return site.rpartition(".")[0], site.rpartition(".")[2], ""


def _is_api(entry: dict, module: str, name: str, kind: str) -> bool:
    """Whether ``module.name`` is part of the module's API rather than an incidental import.

    Definitions are; imports only when listed in ``__all__``, re-exported with ``*``, or made by a package
    ``__init__`` without ``__all__`` (the re-export convention).
    """
    if kind.startswith("module:"):
        return False
    if not kind.startswith(("import:", "export:")):
        return True
    if not kind[7:].startswith("torch"):
        return False
    if kind.startswith("export:"):
        return True  # a star re-export: the source's __all__ says it is public
    if "all" in entry:
        return name in entry["all"]
    return bool(entry.get("package"))


def _public_spellings(release: dict) -> dict[str, set[str]]:
    """Origin (defining module + name) → every public qualified name that serves it."""
    found: dict[str, set[str]] = {}
    for module, entry in release["modules"].items():
        if not _public_module(module):
            continue
        for name, kind in entry["names"].items():
            if not _is_api(entry, module, name, kind):
                continue
            origin = _origin(release, module, name) or f"{module}.{name}"
            found.setdefault(origin, set()).add(f"{module}.{name}")
    return found


def _same_literal(old: str, new: str) -> bool:
    """``0`` and ``0.0``, ``'mean'`` and ``"mean"``: the same value written differently."""
    try:
        return ast.literal_eval(old) == ast.literal_eval(new)
    except (ValueError, SyntaxError):
        return False


def _compare(store: dict, qual: str, old: list, new: list, release: str) -> None:
    old_by_name = {p[0]: p for p in old}
    new_by_name = {p[0]: p for p in new}
    new_has_kwargs = any(p[1] == "**" for p in new)
    old_positional = [p[0] for p in old if p[1] in "pn"]
    new_positional = [p[0] for p in new if p[1] in "pn"]
    new_has_varargs = any(p[1] == "*" for p in new)
    for name, kind, default in old:
        if kind in ("*", "**"):
            continue
        changes = store.get(qual, {}).get(name, {})
        current = new_by_name.get(name)
        if current is None:
            if new_has_kwargs or kind == "p":
                continue
            # Renamed: a new parameter took the same position.
            renamed = None
            if kind == "n" and name in old_positional:
                position = old_positional.index(name)
                if position < len(new_positional) and new_positional[position] not in old_by_name:
                    renamed = new_positional[position]
            if "removed" not in changes:
                store.setdefault(qual, {}).setdefault(name, {})["removed"] = [release, renamed]
            continue
        if kind == "n" and current[1] == "k" and not new_has_varargs:
            store.setdefault(qual, {}).setdefault(name, {}).setdefault(
                "keyword_only", [release, old_positional.index(name)])
        if default is not None and current[2] is not None and default != current[2] and "…" not in (default, current[2]) \
                and not _same_literal(default, current[2]):
            position = new_positional.index(name) if name in new_positional else -1
            store.setdefault(qual, {}).setdefault(name, {}).setdefault("defaults", []).append(
                [release, default, current[2], position])


# -- command line -----------------------------------------------------------------------------------------
def wheel_for(directory: Path, version: str) -> Path | None:
    for path in sorted(directory.glob(f"torch-{version}*.whl")):
        return path
    return None


def download(directory: Path, version: str) -> None:
    platform = _PLATFORMS.get(version, "manylinux_2_28_x86_64")
    env = {**os.environ, "PIP_CONSTRAINT": "/dev/null"}
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.11", "--platform", platform, f"torch=={version}", "-d",
                    str(directory)], check=True, env=env)


def _cached_read(wheel: Path, cache: Path) -> dict:
    target = cache / f"{wheel.name}.v{READER_VERSION}.json.gz"
    if target.exists():
        return json.loads(gzip.decompress(target.read_bytes()))
    release = read_release(wheel)
    cache.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(json.dumps(release).encode()))
    return release


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder with torch-X.Y.Z-*.whl")
    parser.add_argument("--download", action="store_true", help="pip download the missing wheels")
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / "bench" / ".cache" / "api_db")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--star-output", type=Path, default=STAR_OUTPUT)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    wheels = {}
    for version in RELEASES:
        wheel = wheel_for(args.wheels, version)
        if wheel is None and args.download:
            download(args.wheels, version)
            wheel = wheel_for(args.wheels, version)
        if wheel is None:
            print(f"error: no wheel for torch {version} in {args.wheels}", file=sys.stderr)
            return 2
        wheels[version] = wheel
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(wheels, pool.map(_cached_read, wheels.values(), [args.cache] * len(wheels))))
    data = fold(results)
    # Per release: the public modules, for the runtime test and the coverage script.
    data["public_modules"] = {".".join(v.split(".")[:2]): sorted(m for m in r["modules"] if _public_module(m))
                              for v, r in results.items()}
    payload = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    args.output.write_bytes(gzip.compress(payload, mtime=0))
    stars = json.dumps(star_exports(results), sort_keys=True, separators=(",", ":")).encode()
    args.star_output.write_bytes(gzip.compress(stars, mtime=0))
    print(f"{args.star_output}: {args.star_output.stat().st_size // 1024} KiB")
    print(f"{args.output}: {len(data['removed'])} removed names, {len(data['removed_modules'])} removed modules, "
          f"{len(data['deprecated'])} deprecations, {len(data['keywords'])} functions with keyword changes; "
          f"{args.output.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
