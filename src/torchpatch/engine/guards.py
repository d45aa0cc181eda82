"""Compatibility code: which branch of a version or feature check runs only on old PyTorch releases.

Code such as ``torch.amp.GradScaler() if TORCH_GE_2_4 else torch.cuda.amp.GradScaler()`` or
``try: from torch.amp import x / except ImportError: from torch.cuda.amp import x`` keeps old
releases working on purpose; its old branch is not a finding.

A condition is a check because of what it *is*, never because a name merely contains "version"
or "less" (``headless``, ``force_conversion``, ``layer_3_3`` are no checks):

- a comparison with the torch version (``torch.__version__``, ``version.parse(torch.__version__)``,
  ``int(torch.__version__.split(".")[0])``, or a name computed from one, at module level or in the
  function that tests it);
- a call of a torch-version helper (``is_torch_version("<", "2.2")``,
  ``is_torch_greater_or_equal("2.4")``, ``compare_versions("torch", ">=", "2.1")``,
  ``RequirementCache("torch>=2.1")``);
- ``hasattr(<torch object>, "name")`` (or ``getattr(<torch object>, "name", None) is not None``, also through
  a name bound only to that ``getattr``: ``fn = getattr(torch, "name", None)`` ... ``if fn is not None:``);
- a keyword bound on a torch-version helper (``required_torch_version(max_version=0.4)``);
- a parameter probe of a torch callable (``"x" in inspect.signature(torch.f).parameters``): its direction
  cannot be told, so neither branch is reported;
- a call of a helper named like a check (``check_version``, ``compare``) on the torch version
  (``check_version(torch.__version__, "1.13.0")``): its direction cannot be told, so neither branch is
  reported, unless it defines a flag whose name tells (``TORCH_1_13 = check_version(...)``: true from 1.13);
- a module-level boolean whose visible definition is one of the above (``WITH_PT20 = int(...) >= 2``,
  ``has_compile = hasattr(torch, "compile")``) or is True in ``try: import new`` and False in its
  ``except ImportError:``; such a name is followed to its uses anywhere in the file;
- a name whose definition is not visible (imported from the project's own ``utils``/``compat``, or
  an attribute of such a module) only by its name: a torch token (``torch``, ``pt``, ``th``, ``PT20``)
  and a version token (``2_4``, ``ge``, ``greater``, ``at_least``, ``less``...).

Outside conditions, the rest of ``getattr(<torch object>, "new", None) or old`` and a name or attribute
given as the default of ``getattr(<torch object>, "new", old)`` are the values old releases use.

torchvision and torchaudio versions count as torch versions (each of their releases pins one torch
release): ``_TORCHVISION_LESS_THAN_0_13``, ``compare_version("torchvision", operator.le, "0.13.0")``.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from collections.abc import Callable

from torchpatch._record import Record
from torchpatch.syntax import names_read_in

BODY_IS_OLD = "body"  # the if-branch runs on old releases (``if version < 2.4:``)
ELSE_IS_OLD = "else"  # the else-branch does (``if version >= 2.4:``, ``if hasattr(torch, "compile"):``)
BOTH = "both"  # a version check whose direction we cannot tell: neither branch is reported

#: Exceptions a fallback catches when the new API is missing or has another signature.
FALLBACK_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError", "NameError"})

# torchvision and torchaudio releases pin one torch release each: an old one means an old torch
# (lightning-bolts 0.7.0: ``if _TORCHVISION_LESS_THAN_0_13: ...(pretrained=...)``).
_TORCH_TOKENS = frozenset({"torch", "pt", "th", "pytorch", "torchvision", "torchaudio"})
_TORCH_DISTRIBUTIONS = frozenset({"torch", "torchvision", "torchaudio"})
_TORCH_NUMBERED = re.compile(r"^(?:torch|pt|th|pytorch)v?\d+$")
_NEWER_TOKENS = frozenset({"ge", "gt", "gte", "geq", "greater", "least", "newer", "after", "above", "min"})
_OLDER_TOKENS = frozenset({"lt", "le", "lte", "leq", "less", "older", "before", "below", "lower", "max"})
_VERSION_NAMES = ("torch.__version__", "torch.version.__version__", "torchvision.__version__", "torchaudio.__version__")
_VALUE_TOKENS = frozenset({"version", "ver", "vers"})
_REQUIREMENT = re.compile(r"^\s*torch\s*(>=|>|<=|<|==|!=|~=)")

#: Older / newer / unknown, as the truth value of a condition says: what a True condition implies.
_OLD, _NEW, _UNKNOWN = "old", "new", "unknown"


def catches_missing_api(handler: ast.ExceptHandler) -> bool:
    """``except ImportError:`` and friends: the handler is the path for releases without the new API."""
    if handler.type is None:
        return False
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in types}
    return bool(names) and names <= FALLBACK_EXCEPTIONS


_BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def handler_is_fallback(node: ast.Try, handler: ast.ExceptHandler, is_version_check: Callable[[ast.If], bool]) -> bool:
    """The handler is the old releases' path: ``except ImportError:`` and friends, or a broad ``except:`` /
    ``except Exception:`` after a ``try`` that only imports or only checks the version (unsloth 2026.10:
    ``try: from torch.distributed.fsdp import FSDPModule`` / ``except Exception:`` / the ``_composable``
    import; megatron-core 0.16: ``try: if is_torch_min_version("2.4.0a0"): custom_fwd = torch.amp...``)."""
    if catches_missing_api(handler):
        return True
    if handler.type is not None:
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if not all(type(t) is ast.Name and t.id in _BROAD_EXCEPTIONS for t in types):
            return False
    body = node.body
    return bool(body) and (all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body)
                           or all(type(s) is ast.If and is_version_check(s) for s in body))


def import_returns_early(node: ast.stmt) -> bool:
    """``try: from torch.new import X; return X`` / ``except ImportError: pass``: the statements after
    it run only where the new import failed (unsloth 2026.10 ``_fsdp_module_class``)."""
    if type(node) is not ast.Try or node.orelse or node.finalbody or len(node.body) < 2:
        return False
    *imports, last = node.body
    if not isinstance(last, _EXITS) or not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in imports):
        return False
    if not any(_imports_torch(s) for s in imports):
        return False
    return bool(node.handlers) and all(catches_missing_api(h) and not any(isinstance(s, _EXITS) for s in h.body)
                                       for h in node.handlers)


def _imports_torch(statement: ast.stmt) -> bool:
    names = [a.name for a in statement.names] if type(statement) is ast.Import else [statement.module or ""]
    return type(statement) in (ast.Import, ast.ImportFrom) and getattr(statement, "level", 0) == 0 \
        and any(name == "torch" or name.startswith("torch.") for name in names)


def operands_on_new_releases(node: ast.BoolOp, facts: "GuardFacts") -> int:
    """How many operands of ``a or b`` run where the new API exists: after ``getattr(<torch object>,
    "new", None)`` the rest of an ``or`` is the fallback for releases without it (unsloth 2026.10:
    ``getattr(torch.accelerator, "current_device_index", None) or accel.current_device_idx``)."""
    if not isinstance(node.op, ast.Or):
        return len(node.values)
    for index, value in enumerate(node.values[:-1]):
        if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "getattr" \
                and _feature_probe(value, facts):
            return index + 1
    return len(node.values)


def getattr_fallback(node: ast.Call, facts: "GuardFacts") -> ast.expr | None:
    """The default of ``getattr(<torch object>, "new", old)`` when it is a name or an attribute: the value
    used only on releases without ``new`` (pyro 1.9: ``getattr(torch.jit, "script_if_tracing",
    torch.jit.script)``). A call as the default is not one: getattr evaluates it on every release."""
    if len(node.args) != 3 or node.keywords or type(node.args[2]) not in (ast.Name, ast.Attribute):
        return None
    return node.args[2] if _feature_probe(node, facts) else None


@lru_cache(maxsize=8192)
def _tokens(name: str) -> tuple[str, ...]:
    """``TORCH_GE_2_4`` -> [torch, ge, 2, 4]; ``isTorchGreaterOrEqual`` -> [is, torch, greater, or, equal].

    ``PT2E`` stays one token: it names PyTorch 2 export quantization (``_HAVE_PT2E``), not a release."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    tokens = [token for token in spaced.lower().split("_") if token]
    for index in range(len(tokens) - 1, 0, -1):
        if tokens[index] == "e" and tokens[index - 1] == "pt2":
            tokens[index - 1:index + 1] = ["pt2e"]
    return tuple(tokens)


@lru_cache(maxsize=8192)  # asked for the same few names at every if statement of a file
def name_role(name: str) -> str | None:
    """What a name says it is, for names whose definition is not visible.

    ``"new"``: a flag true on newer releases (``TORCH_GE_2_4``, ``WITH_PT20``, ``_TORCH_2_6``);
    ``"old"``: true on older ones (``TORCH_LESS_THAN_2_1``); ``"value"``: a torch version to compare
    (``TORCH_VERSION``, ``_torch_version``); None: nothing to do with torch versions.
    """
    tokens = _tokens(name)
    has_torch = any(t in _TORCH_TOKENS or _TORCH_NUMBERED.match(t) for t in tokens)
    if not has_torch:
        return None
    numbered = any(t.isdigit() or _TORCH_NUMBERED.match(t) for t in tokens)
    if any(t in _OLDER_TOKENS for t in tokens):
        return _OLD
    if any(t in _NEWER_TOKENS for t in tokens) or numbered:
        return _NEW
    if any(t in _VALUE_TOKENS for t in tokens):
        return "value"
    return None


class GuardFacts(Record):
    """What the classifier may ask about the file.

    ``qualname(expr)``: the torch name an expression refers to (None when it is not torch);
    ``definitions``: module-level names -> how they were assigned (see :func:`module_definitions`);
    ``imported``: names bound by an import (their definition is elsewhere).
    """

    _fields = ("qualname", "definitions", "imported", "function", "_assigned", "_reads_version", "_local",
               "local_values")
    _not_shown = frozenset({"_assigned", "_reads_version", "_local"})

    def __init__(self, qualname: Callable[[ast.expr], str | None],
                 definitions: dict[str, list[tuple[str, ast.expr]]] | None = None, imported: frozenset[str] = frozenset(),
                 function: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
                 local_values: Callable[[str], list[ast.expr | None] | None] | None = None) -> None:
        self.qualname = qualname
        self.definitions = {} if definitions is None else definitions
        self.imported = imported
        #: The function whose body is asked about: a name it assigns is its own local (captum 0.9:
        #: ``version = parse_version(torch.__version__)`` then ``if version < (2, 0, 0):``).
        self.function = function
        self._assigned: dict[str, list[tuple[str, ast.expr]]] = {}
        self._reads_version: dict[str, bool] = {}
        self._local: dict[str, list[tuple[str, ast.expr]] | None] | None = None
        #: In a function: the values a local name is assigned (None for a binding that is no plain
        #: ``name = value``, such as a parameter); None when the function does not bind the name.
        self.local_values = local_values

    def local_definitions(self, name: str) -> list[tuple[str, ast.expr]] | None:
        """How the function assigns ``name`` (None when it is not one of its locals)."""
        if self.function is None:
            return None
        local = self._local
        if local is None:
            local = self._local = {}
            self._assigned = module_definitions(self.function)[0]
        if name in local:
            return local[name]
        values = self._assigned.get(name)
        # ``flag = flag and x`` is left out: which binding of ``flag`` it reads is not followed.
        if values is not None and any(name in names_read_in(value) for _, value in values):
            values = None
        local[name] = values
        return values

    def local_reads_version(self, name: str) -> bool | None:
        """Whether the local ``name`` holds the torch version (see :func:`_reads_torch_version`);
        None when it is not a local. Each name is answered once (a cycle of locals reads as False)."""
        known = self._reads_version.get(name)
        if known is not None:
            return known
        values = self.local_definitions(name)
        if values is None:
            return None
        self._reads_version[name] = False
        answer = self._reads_version[name] = any(_reads_torch_version(value, self) for _, value in values)
        return answer

    def is_torch(self, expr: ast.expr) -> bool:
        return self.torch_name(expr) is not None

    def torch_name(self, expr: ast.expr) -> str | None:
        """The torch name ``expr`` refers to, or None when it is not torch (one lookup for both questions)."""
        name = self.qualname(expr)
        return name if name is not None and name.split(".")[0] in _TRACKED_ROOTS else None


_TRACKED_ROOTS = frozenset({"torch", "functorch", "torchvision", "torchaudio", "torchao", "torchtext"})


def module_definitions(module: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
                       ) -> tuple[dict[str, list[tuple[str, ast.expr]]], frozenset[str]]:
    """Module-level assignments ``name = value`` (also inside module-level if/try blocks), each as
    (where, value) with where "plain", "try" or "fallback" (an ``except ImportError`` handler);
    and the names module-level imports bind."""
    definitions: dict[str, list[tuple[str, ast.expr]]] = {}
    imported: set[str] = set()
    _collect_definitions(module.body, "plain", definitions, imported)
    return definitions, frozenset(imported)


def _collect_definitions(body: list[ast.stmt], where: str, definitions: dict[str, list[tuple[str, ast.expr]]],
                         imported: set[str]) -> None:
    """module_definitions' walk. A module-level function, not a closure: a closure that calls itself is a
    reference cycle, which would keep ``definitions`` (and the syntax tree under its values) alive until the
    cyclic collector runs."""
    for statement in body:
        kind = type(statement)
        if kind is ast.Assign:
            for target in statement.targets:
                if type(target) is ast.Name:
                    definitions.setdefault(target.id, []).append((where, statement.value))
        elif kind is ast.AnnAssign and type(statement.target) is ast.Name and statement.value is not None:
            definitions.setdefault(statement.target.id, []).append((where, statement.value))
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in statement.names:
                imported.add(alias.asname or alias.name.split(".")[0])
        elif kind is ast.If:
            _collect_definitions(statement.body, "branch", definitions, imported)
            _collect_definitions(statement.orelse, "branch", definitions, imported)
        elif kind is ast.Try or kind.__name__ == "TryStar":
            _collect_definitions(statement.body, "try" if where == "plain" else where, definitions, imported)
            for handler in statement.handlers:
                _collect_definitions(handler.body, "fallback" if catches_missing_api(handler) else "branch",
                                     definitions, imported)
            _collect_definitions(statement.orelse, "try" if where == "plain" else where, definitions, imported)
            _collect_definitions(statement.finalbody, where, definitions, imported)


def old_branch(test: ast.expr, facts: GuardFacts | Callable[[ast.expr], bool]) -> str | None:
    """Which branch of ``if test`` is the old-release path, or None when the test is no version check."""
    if not isinstance(facts, GuardFacts):
        is_torch = facts
        facts = GuardFacts(qualname=lambda expr: "torch" if is_torch(expr) else None)
    meaning = _meaning(test, facts, 0)
    if meaning is None:
        return None
    return _branch(test, meaning, facts)


# -- what a condition means ------------------------------------------------------------------------
# _meaning returns None (not a check), or a small tree: ("atom", _OLD/_NEW/_UNKNOWN), ("not", m),
# ("and", [m or None, ...]), ("or", [...]).

_MAX_DEPTH = 8


def _meaning(test: ast.expr, facts: GuardFacts, depth: int):
    if depth > _MAX_DEPTH:
        return None
    kind = type(test)
    if kind is ast.UnaryOp and isinstance(test.op, ast.Not):
        inner = _meaning(test.operand, facts, depth + 1)
        return None if inner is None else ("not", inner)
    if kind is ast.BoolOp:
        parts = [_meaning(value, facts, depth + 1) for value in test.values]
        if all(part is None for part in parts):
            return None
        return ("and" if isinstance(test.op, ast.And) else "or", parts)
    if kind is ast.Compare:
        return _compare_meaning(test, facts, depth)
    if kind is ast.Call:
        return _call_meaning(test, facts, depth)
    if kind is ast.Name:
        return _name_meaning(test.id, facts, depth)
    if kind is ast.Attribute and not facts.is_torch(test):
        role = name_role(test.attr)
        return ("atom", role) if role in (_OLD, _NEW) else None
    return None


def _name_meaning(name: str, facts: GuardFacts, depth: int):
    local = facts.local_definitions(name)
    if local is not None:  # the local shadows any module-level name; without a meaning the name tells
        meaning = _definition_meaning(name, local, facts, depth)
        if meaning is not None:
            return meaning
        role = name_role(name)
        return ("atom", role) if role in (_OLD, _NEW) else None
    definitions = facts.definitions.get(name)
    if definitions:
        return _definition_meaning(name, definitions, facts, depth)
    role = name_role(name)  # imported, or not defined in this file at all
    return ("atom", role) if role in (_OLD, _NEW) else None


def _definition_meaning(name: str, definitions: list[tuple[str, ast.expr]], facts: GuardFacts, depth: int):
    # ``try: import new; HAS_NEW = True / except ImportError: HAS_NEW = False``
    constants = {(where, value.value) for where, value in definitions
                 if type(value) is ast.Constant and type(value.value) is bool}
    if len(constants) == len(definitions) and {w for w, _ in constants} == {"try", "fallback"}:
        in_try = {value for where, value in constants if where == "try"}
        in_fallback = {value for where, value in constants if where == "fallback"}
        if in_try == {True} and in_fallback == {False}:
            return ("atom", _NEW)
        if in_try == {False} and in_fallback == {True}:
            return ("atom", _OLD)
        return None
    meanings = [_meaning(value, facts, depth + 1) for _, value in definitions]
    if len(meanings) == 1 or all(m == meanings[0] for m in meanings):
        if meanings[0] == ("atom", _UNKNOWN) and name_role(name) in (_OLD, _NEW):
            # ``TORCH_1_13 = check_version(TORCH_VERSION, "1.13.0")``: a check whose helper does not
            # say its direction; the flag's name does (true from 1.13 on).
            return ("atom", name_role(name))
        if meanings[0] is not None:
            return meanings[0]
    if len(constants) == len(definitions):  # flags set in branches we cannot tie: the name tells
        role = name_role(name)
        return ("atom", role) if role in (_OLD, _NEW) else None
    return None


def _is_version_value(expr: ast.expr, facts: GuardFacts, depth: int) -> bool:
    """Whether an expression is (derived from) the torch version: ``torch.__version__``,
    ``version.parse(torch.__version__).release``, ``int(torch.__version__.split(".")[0])``,
    or a name defined as one."""
    if depth > _MAX_DEPTH:
        return False
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Attribute:
            torch_name = facts.torch_name(node)
            if torch_name is not None:
                if _is_version_name(torch_name):
                    return True
            elif name_role(node.attr) == "value":  # utils.TORCH_VERSION
                return True
            else:
                stack.append(node.value)
        elif kind is ast.Name:
            torch_name = facts.torch_name(node)
            if torch_name is not None:
                if _is_version_name(torch_name):
                    return True
                continue
            reads_version = facts.local_reads_version(node.id)
            if reads_version is not None:
                if reads_version or name_role(node.id) == "value":
                    return True
                continue
            definitions = facts.definitions.get(node.id)
            if definitions:
                if any(_is_version_value(value, facts, depth + 1) for _, value in definitions):
                    return True
            elif name_role(node.id) == "value":
                return True
        elif kind is ast.Call:
            if _names_torch_distribution(node):
                return True
            stack.append(node.func)
            stack.extend(node.args)
            stack.extend(k.value for k in node.keywords)
        elif kind is ast.Subscript:
            stack.append(node.value)
        elif kind in (ast.Tuple, ast.List):
            stack.extend(node.elts)
        elif kind is ast.BinOp:
            stack.extend((node.left, node.right))
    return False


def _reads_torch_version(expr: ast.expr, facts: GuardFacts) -> bool:
    """Whether a local's value visibly reads the torch version (``parse_version(torch.__version__)``,
    ``importlib.metadata.version("torch")``, or another local that does). Stricter than
    :func:`_is_version_value`, which also trusts names: ``v = get_version()`` and
    ``minimum = parse("1.10")`` are left to what their names say."""
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Attribute:
            # only ``__version__`` can end a version name: the (costly) torch lookup only for it
            if node.attr == "__version__" and _is_version_name(facts.torch_name(node) or ""):
                return True
        elif kind is ast.Name:
            reads_version = facts.local_reads_version(node.id)
            if reads_version is not None:
                if reads_version:
                    return True
            elif "version" in node.id.lower() and _is_version_name(facts.torch_name(node) or ""):
                return True  # ``from torch import __version__ as tv``
        elif kind is ast.Call and _names_torch_distribution(node):
            return True
    return False


def _is_version_name(qualname: str) -> bool:
    return any(qualname == name or qualname.startswith(name + ".") for name in _VERSION_NAMES)


def _names_torch_distribution(call: ast.Call) -> bool:
    """``importlib.metadata.version("torch")``, ``pkg_resources.get_distribution("torch")``."""
    name = call.func.attr if type(call.func) is ast.Attribute else call.func.id if type(call.func) is ast.Name else ""
    return name in ("version", "get_distribution", "distribution") and len(call.args) == 1 \
        and type(call.args[0]) is ast.Constant and call.args[0].value == "torch"


def _probes_torch_signature(test: ast.Compare, facts: GuardFacts) -> bool:
    """``"symmetric" in get_func_args(torch.cuda.MemPool)``, ``"x" in inspect.signature(torch.f).parameters``
    (megatron-core 0.16): a parameter probe of a torch callable. Parameters come and go, so it says
    nothing about the direction: neither branch is reported."""
    if len(test.ops) != 1 or type(test.ops[0]) not in (ast.In, ast.NotIn):
        return False
    if type(test.left) is not ast.Constant or type(test.left.value) is not str:
        return False
    probe = test.comparators[0]
    while type(probe) in (ast.Attribute, ast.Subscript):  # ``.parameters``, ``.args``, ``[0]``
        probe = probe.value
    return type(probe) is ast.Call and any(facts.is_torch(arg) for arg in probe.args)


def _compare_meaning(test: ast.Compare, facts: GuardFacts, depth: int):
    if _probes_torch_signature(test, facts):
        call = test.comparators[0]
        if type(call) is ast.Call and type(call.func) is ast.Name and call.func.id == "dir":
            # ``"all_gather_into_tensor" not in dir(dist)`` (colossalai 0.5): hasattr by another name.
            return ("atom", _NEW if type(test.ops[0]) is ast.In else _OLD)
        return ("atom", _UNKNOWN)
    if len(test.ops) == 1 and type(test.ops[0]) in (ast.Is, ast.IsNot) \
            and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None:
        # ``getattr(torch, "compile", None) is not None``
        probe = _feature_probe(test.left, facts)
        if probe is None and not (type(test.left) is ast.Name and _holds_probe(test.left.id, facts)):
            return None
        return ("atom", _NEW) if type(test.ops[0]) is ast.IsNot else ("atom", _OLD)
    if _signature_probe(test, facts):
        # ``if "symmetric" in get_func_args(torch.cuda.MemPool):`` (megatron-core 0.16.1): each branch
        # is written for the releases whose signature it found; which era has the parameter is not
        # known here, so neither branch is reported.
        return ("atom", _UNKNOWN)
    operands = [test.left, *test.comparators]
    versioned = [_is_version_value(operand, facts, depth + 1) for operand in operands]
    if not any(versioned) and len(operands) == 2:
        # ``cur_version >= TORCH_VERSION_2_8_0`` (neural_compressor): the running version is a local we
        # do not follow, the other side a named torch release; that name makes it a version check.
        constants = [_is_version_constant(operand, facts) for operand in operands]
        if constants.count(True) == 1 and type(operands[constants.index(False)]) is not ast.Constant:
            versioned = [not constant for constant in constants]
    if not any(versioned):
        return None
    if len(test.ops) != 1:
        return ("atom", _UNKNOWN)
    operator = test.ops[0]
    version_on_left = versioned[0] and not versioned[1]
    version_on_right = versioned[1] and not versioned[0]
    if not (version_on_left or version_on_right):
        return ("atom", _UNKNOWN)
    if isinstance(operator, (ast.Gt, ast.GtE)):
        return ("atom", _NEW if version_on_left else _OLD)
    if isinstance(operator, (ast.Lt, ast.LtE)):
        return ("atom", _OLD if version_on_left else _NEW)
    return ("atom", _UNKNOWN)


def _signature_probe(test: ast.Compare, facts: GuardFacts) -> bool:
    """``"name" in <...>(torch.f)...`` (``inspect.signature(torch.f).parameters``, ``get_func_args(torch.f)``):
    a parameter name looked up in what a call returns about a torch callable."""
    if len(test.ops) != 1 or type(test.ops[0]) not in (ast.In, ast.NotIn):
        return False
    if type(test.left) is not ast.Constant or type(test.left.value) is not str or not test.left.value.isidentifier():
        return False
    for node in ast.walk(test.comparators[0]):
        if type(node) is ast.Call and any(facts.is_torch(argument) for argument in node.args):
            return True
    return False


def _is_version_constant(expr: ast.expr, facts: GuardFacts) -> bool:
    """A name for one torch release: ``TORCH_VERSION_2_8_0``, ``utils.TORCH_VER_2_4`` — a torch token,
    a version token and a number. A visible definition must be ``Version("2.8.0")``/``parse("2.8")``."""
    name = expr.id if type(expr) is ast.Name else expr.attr if type(expr) is ast.Attribute else None
    if name is None:
        return False
    tokens = _tokens(name)
    if not (any(t in _TORCH_TOKENS for t in tokens) and any(t in _VALUE_TOKENS for t in tokens)
            and any(t.isdigit() for t in tokens)):
        return False
    if facts.is_torch(expr):  # after the name test: a lookup costs more
        return False
    definitions = facts.definitions.get(name) if type(expr) is ast.Name else None
    if not definitions:
        return True
    return all(type(value) is ast.Call and len(value.args) == 1 and type(value.args[0]) is ast.Constant
               and type(value.args[0].value) is str for _, value in definitions)


def _feature_probe(expr: ast.expr, facts: GuardFacts) -> bool | None:
    """``hasattr(torch.x, "y")`` / ``getattr(torch.x, "y", None)``: True when it probes torch."""
    if type(expr) is not ast.Call or type(expr.func) is not ast.Name or expr.func.id not in ("hasattr", "getattr"):
        return None
    if not expr.args or not facts.is_torch(expr.args[0]):
        return None
    if expr.func.id == "getattr" and len(expr.args) != 3:
        return None
    return True


def _holds_probe(name: str, facts: GuardFacts) -> bool:
    """``get_dtype = getattr(torch, "get_autocast_dtype", None)`` then ``get_dtype is not None`` (rf-detr 1.11):
    every binding of the name (the function's own, else the module's) is a ``getattr`` of torch with
    default None, so testing it for None is the probe itself."""
    local = facts.local_values(name) if facts.local_values is not None else None
    if local is not None:
        values = local
    elif name in facts.imported:
        return False
    else:
        values = [value for _, value in facts.definitions.get(name, ())]
    return bool(values) and all(
        value is not None and _feature_probe(value, facts) and value.func.id == "getattr"
        and type(value.args[2]) is ast.Constant and value.args[2].value is None for value in values)


_OPERATOR_MEANING = {"<": _OLD, "<=": _OLD, ">": _NEW, ">=": _NEW, "lt": _OLD, "le": _OLD, "gt": _NEW, "ge": _NEW}


def _call_meaning(call: ast.Call, facts: GuardFacts, depth: int):
    if _feature_probe(call, facts):
        return ("atom", _NEW)
    func = call.func
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
    if not name or facts.is_torch(func):
        return None
    strings = [a.value for a in call.args if type(a) is ast.Constant and type(a.value) is str]
    operators = [s.strip() for s in strings if s.strip() in _OPERATOR_MEANING]
    # ``operator.ge`` passed as the comparison (lightning's compare_version).
    operators += [a.attr for a in call.args if type(a) is ast.Attribute and a.attr in ("lt", "le", "gt", "ge")]
    # RequirementCache("torch>=2.1"), package_available("torch>=2.1")
    for text in strings:
        match = _REQUIREMENT.match(text)
        if match:
            return ("atom", _OPERATOR_MEANING.get(match.group(1), _UNKNOWN))
    about_torch = not _TORCH_DISTRIBUTIONS.isdisjoint(strings) or any(_is_version_value(a, facts, depth + 1)
                                                                   for a in call.args)
    role = name_role(name)
    if role is None and not about_torch:
        return None
    if role is None and not re.search(r"version|compare|check", name, re.IGNORECASE):
        return None
    if operators:  # is_torch_version("<", "2.2"), compare_versions("torch", ">=", "2.1")
        return ("atom", _OPERATOR_MEANING[operators[0]])
    # deepspeed's required_torch_version(min_version=2.1) / (max_version=0.4): a bound by keyword.
    bounds = {k.arg for k in call.keywords} & {"min_version", "max_version"}
    if bounds:
        return ("atom", _UNKNOWN if len(bounds) == 2 else _NEW if bounds == {"min_version"} else _OLD)
    if role in (_OLD, _NEW):  # is_torch_greater_or_equal("2.4"), torch_version_at_least("2.4")
        return ("atom", role)
    # ultralytics' check_version(torch.__version__, "1.13.0"): a check of the torch version against a
    # release, direction unknown (``Version(torch.__version__)`` is a value, not a check).
    names_a_release = any(re.match(r"^\d+(\.\d+)+", text.strip()) for text in strings)
    if about_torch and names_a_release and re.search(r"check|compare", name, re.IGNORECASE):
        return ("atom", _UNKNOWN)
    return None


def _branch(test: ast.expr, meaning, facts: GuardFacts) -> str | None:
    """Which branch only old releases take: the body when a True test implies an old release, the
    else when a False one does. ``a and b``: only its body can be told (else may be ``not b``)."""
    body_old = _implies(meaning, True, _OLD)
    else_old = _implies(meaning, False, _OLD)
    if body_old and else_old:
        return BOTH
    if body_old:
        return BODY_IS_OLD
    if else_old:
        return ELSE_IS_OLD
    if _has_unknown(meaning):
        return BOTH
    return None


def _implies(meaning, value: bool, era: str) -> bool:
    """Whether the condition having truth ``value`` implies the release is of ``era``."""
    if meaning is None:
        return False
    kind = meaning[0]
    if kind == "atom":
        direction = meaning[1]
        if direction == _UNKNOWN:
            return False
        return (direction == era) if value else (direction != era)
    if kind == "not":
        return _implies(meaning[1], not value, era)
    parts = meaning[1]
    if kind == "and":
        # True: every part is True, so any part implying the era suffices. False: some part is
        # False, so every part's False must imply it (and every part must be a check).
        return any(_implies(p, True, era) for p in parts) if value else all(_implies(p, False, era) for p in parts)
    # or
    return all(_implies(p, True, era) for p in parts) if value else any(_implies(p, False, era) for p in parts)


def _has_unknown(meaning) -> bool:
    if meaning is None:
        return False
    if meaning[0] == "atom":
        return meaning[1] == _UNKNOWN
    if meaning[0] == "not":
        return _has_unknown(meaning[1])
    return all(_has_unknown(p) for p in meaning[1] if p is not None) and any(p is not None for p in meaning[1])
