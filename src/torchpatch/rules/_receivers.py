"""Receiver types known without running code: profiler objects built by a torch call in the same scope.

Only what can be read off the code is inferred, in one function (or the module body) at a time:

- ``with torch.profiler.profile(...) as prof`` / ``prof = torch.profiler.profile(...)`` (and
  ``torch.autograd.profiler.profile``) → a profiler;
- ``prof.key_averages(...)`` → a list of ``FunctionEventAvg``; ``prof.events()`` and
  ``prof.function_events`` → a list of ``FunctionEvent``;
- ``for event in <such a list>``, comprehensions over one, and ``<such a list>[i]`` → one element (a loop
  variable bound by several loops, all over lists of one element type, too).

A name bound more than once in the scope to anything else is not inferred (it may hold another object),
and neither are attributes, function arguments, or objects returned from other functions.
"""

from __future__ import annotations

import ast
import weakref
from typing import Callable, Iterator

from torchpatch.rules._file_scan import enclosing_def_or_module

PROFILERS = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile", "torch.autograd.profiler.profile"})
EVENT = "torch.autograd.profiler_util.FunctionEvent"
EVENT_AVG = "torch.autograd.profiler_util.FunctionEventAvg"
_PROFILER = "profiler"
_LISTS = {"key_averages": EVENT_AVG, "events": EVENT}  # method of a profiler → element type of its list
_LIST_ATTRIBUTES = {"function_events": EVENT}


def element_accesses(scope_node: ast.AST, resolve: Callable[[ast.expr], str | None]) -> Iterator[tuple[ast.Attribute, str]]:
    """Each ``X.attr`` in the scope where X is a profiler event of a known type: (the Attribute, the type)."""
    types = _bind(scope_node, resolve)

    def kind(expr: ast.AST) -> str | None:
        """'profiler', 'list:<element type>' or an element type."""
        if isinstance(expr, ast.Name):
            return types.get(expr.id)
        if isinstance(expr, ast.Call):
            if resolve(expr.func) in PROFILERS:
                return _PROFILER
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in _LISTS and kind(func.value) == _PROFILER:
                return "list:" + _LISTS[func.attr]
            return None
        if isinstance(expr, ast.Attribute) and expr.attr in _LIST_ATTRIBUTES and kind(expr.value) == _PROFILER:
            return "list:" + _LIST_ATTRIBUTES[expr.attr]
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
            inner = kind(expr.value)
            return inner[5:] if inner and inner.startswith("list:") else None
        return None

    types_of_loops(scope_node, types, kind)
    for node in _walk_scope(scope_node):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            found = kind(node.value)
            if found in (EVENT, EVENT_AVG):
                yield node, found


def _bind(scope_node: ast.AST, resolve) -> dict[str, str]:
    """Names bound exactly once in the scope, to a profiler or to one of its event lists."""
    counts: dict[str, int] = {}
    candidates: dict[str, ast.expr] = {}
    for node in _walk_scope(scope_node):
        targets: list[tuple[ast.AST, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            targets = [(target, node.value if len(node.targets) == 1 else None) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [(node.target, None)]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [(item.optional_vars, item.context_expr) for item in node.items if item.optional_vars]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets = [(node.target, None)]
        elif isinstance(node, ast.NamedExpr):
            targets = [(node.target, node.value)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                counts[(alias.asname or alias.name).split(".")[0]] = 2
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope_node:
            counts[node.name] = 2
        for target, value in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if isinstance(target, ast.Name) and value is not None:
                        candidates[name.id] = value
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for argument in ast.walk(scope_node.args):
            if isinstance(argument, ast.arg):
                counts[argument.arg] = 2
    types: dict[str, str] = {}
    for _ in range(3):  # prof → events = prof.key_averages() → …
        for name, value in candidates.items():
            if counts.get(name) != 1 or name in types:
                continue
            if isinstance(value, ast.Call) and resolve(value.func) in PROFILERS:
                types[name] = _PROFILER
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr in _LISTS and isinstance(value.func.value, ast.Name) \
                    and types.get(value.func.value.id) == _PROFILER:
                types[name] = "list:" + _LISTS[value.func.attr]
    return types


def types_of_loops(scope_node: ast.AST, types: dict[str, str], kind) -> None:
    """Loop and comprehension variables over an event list (bound nowhere else in the scope)."""
    bound: dict[str, int] = {}
    for node in _walk_scope(scope_node):
        for target in _targets(node):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    # ``for e in prof.events(): ...`` twice in one function (issue #23): a name every binding of which is a
    # loop over event lists of one element type holds such an event wherever it is read.
    loops: dict[str, set[str | None]] = {}
    for node in _walk_scope(scope_node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name):
            found = kind(node.iter)
            loops.setdefault(node.target.id, set()).add(found[5:] if found and found.startswith("list:") else None)
    for name, found in loops.items():
        if len(found) == 1 and None not in found and bound.get(name) == sum(1 for _ in _loops_binding(scope_node, name)):
            types[name] = next(iter(found))


def _loops_binding(scope_node: ast.AST, name: str) -> Iterator[ast.AST]:
    for node in _walk_scope(scope_node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name) \
                and node.target.id == name:
            yield node


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars]
    return []


def _walk_scope(scope_node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions and classes are their own scopes (comprehensions are not)."""
    stack = list(ast.iter_child_nodes(scope_node))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def scopes_of(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every function (the scopes element_accesses reads one at a time)."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


_SCOPES_DONE: "weakref.WeakKeyDictionary[ast.AST, dict[str, set[int]]]" = weakref.WeakKeyDictionary()


def element_accesses_once(ctx, call: ast.Call, rule_code: str) -> Iterator[tuple[ast.Attribute, str]]:
    """``element_accesses`` of the function (or module) holding ``call``, once per scope and rule: each
    profiler call of a scope triggers the rule, but its events are read only the first time."""
    scope_node = enclosing_def_or_module(ctx, call)
    done = _SCOPES_DONE.setdefault(ctx.tree, {}).setdefault(rule_code, set())
    if id(scope_node) in done:
        return
    done.add(id(scope_node))
    yield from element_accesses(scope_node, lambda expr: ctx.scopes.qualname(expr, ctx.scope))


# -- tensors ----------------------------------------------------------------------------------------
#: torch functions that return a new tensor (every release 2.4 … 2.15), and the Parameter class.
TENSOR_FACTORIES = frozenset({f"torch.{name}" for name in (
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
    "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "stack", "cat", "frombuffer", "empty_strided")} | {"torch.nn.Parameter",
                                                                                    "torch.nn.parameter.Parameter"})
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: Attributes that are tensors on a tensor (``x.data``, ``x.grad``) or on a torch.nn module (``.weight``).
_TENSOR_ATTRIBUTES = frozenset({"data", "grad"})
_MODULE_TENSOR_ATTRIBUTES = frozenset({"weight", "bias"})
_PARAMETER_LISTS = frozenset({"parameters", "buffers"})
_NAMED_PARAMETER_LISTS = frozenset({"named_parameters", "named_buffers"})


def is_tensor(ctx, expr: ast.expr) -> bool:
    """Whether ``expr`` is known, from the code alone, to be a torch tensor: a factory call (``torch.randn``,
    ``nn.Parameter``), a name bound only to one or annotated ``torch.Tensor`` in its function, a loop variable
    over ``m.parameters()``, ``.data``/``.grad`` of a known tensor, ``.weight``/``.bias`` of a torch.nn module
    built in the same function. Anything else (function results, unannotated arguments) is unknown."""
    scope_node = enclosing_def_or_module(ctx, expr)

    def resolve(node: ast.expr) -> str | None:
        return ctx.scopes.qualname(node, ctx.scope)

    def known(node: ast.expr, depth: int = 0) -> str | None:
        """'tensor', 'module' or None."""
        if depth > 4:
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            qualname = resolve(node.func)
            if qualname in TENSOR_FACTORIES:
                return "tensor"
            if qualname and qualname.startswith("torch.nn.") and qualname.rpartition(".")[2][:1].isupper():
                return "module"
            if isinstance(node.func, ast.Attribute) and node.func.attr == "clone" and known(node.func.value, depth + 1) == "tensor":
                return "tensor"
            return None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return "tensor" if _self_attribute_is_tensor(ctx, node, resolve) else None
            inner = known(node.value, depth + 1)
            if node.attr in _TENSOR_ATTRIBUTES and inner == "tensor":
                return "tensor"
            if node.attr in _MODULE_TENSOR_ATTRIBUTES and inner == "module":
                return "tensor"
            return None
        if isinstance(node, ast.Name):
            return _name_kind(ctx, scope_node, node.id, known, resolve, depth)
        return None

    return known(expr) == "tensor"


#: The legacy typed constructors (``torch.FloatTensor(storage)``, ``torch.cuda.LongTensor(n)``) build tensors too.
_TYPED_CONSTRUCTORS = frozenset(f"torch.{prefix}{kind}Tensor" for prefix in ("", "cuda.") for kind in (
    "Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool"))


def _self_attribute_is_tensor(ctx, node: ast.Attribute, resolve) -> bool:
    """``self.X`` where every ``self.X = ...`` in the methods of the enclosing class is a tensor factory or
    typed-constructor call (pretrained-models' meter: ``self.scores = torch.FloatTensor(torch.FloatStorage())``
    in ``reset``, ``self.scores.storage()`` in ``add``). Any other binding of ``self.X`` makes it unknown."""
    cls = ctx.parent_of(node)
    while cls is not None and not isinstance(cls, ast.ClassDef):
        cls = ctx.parent_of(cls)
    if cls is None:
        return False
    kinds = set()
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in _walk_scope(method):
            targets = _targets(sub) if not isinstance(sub, ast.AugAssign) else []
            if not any(isinstance(t, ast.Attribute) and t.attr == node.attr and isinstance(t.value, ast.Name)
                       and t.value.id == "self" for target in targets for t in ast.walk(target)):
                continue
            value = getattr(sub, "value", None)
            kinds.add(isinstance(sub, (ast.Assign, ast.AnnAssign)) and len(targets) == 1
                      and isinstance(targets[0], ast.Attribute) and isinstance(value, ast.Call)
                      and isinstance(value.func, (ast.Name, ast.Attribute))
                      and (resolve(value.func) in TENSOR_FACTORIES or resolve(value.func) in _TYPED_CONSTRUCTORS))
    return kinds == {True}


def _name_kind(ctx, scope_node: ast.AST, name: str, known, resolve, depth: int) -> str | None:
    kinds: set[str | None] = set()
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for argument in ast.walk(scope_node.args):
            if isinstance(argument, ast.arg) and argument.arg == name:
                annotation = argument.annotation
                kinds.add("tensor" if annotation is not None and _annotated_tensor(annotation, resolve) else None)
    for node in _walk_scope(scope_node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    kinds.add(known(node.value, depth + 1) if len(node.targets) == 1 else None)
                elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    kinds.add(None)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            kinds.add("tensor" if _annotated_tensor(node.annotation, resolve) else None)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.target)):
                kinds.add(_loop_kind(node, name))
        elif _rebinds(node, name):
            kinds.add(None)
    return kinds.pop() if len(kinds) == 1 else None


def _rebinds(node: ast.AST, name: str) -> bool:
    """Another kind of binding of ``name``: an import, a definition, ``+=``, ``:=``, ``with ... as``, ``global``."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((alias.asname or alias.name).split(".")[0] == name for alias in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return name in node.names
    targets = _targets(node) if isinstance(node, (ast.AugAssign, ast.NamedExpr, ast.With, ast.AsyncWith)) else []
    return any(isinstance(n, ast.Name) and n.id == name for target in targets for n in ast.walk(target))


def _loop_kind(node: ast.AST, name: str) -> str | None:
    """``for p in m.parameters()`` / ``for n, p in m.named_parameters()`` → a tensor."""
    iterable, target = node.iter, node.target
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)):
        return None
    if iterable.func.attr in _PARAMETER_LISTS and isinstance(target, ast.Name):
        return "tensor"
    if iterable.func.attr in _NAMED_PARAMETER_LISTS and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and isinstance(target.elts[1], ast.Name) and target.elts[1].id == name:
        return "tensor"
    return None


def _annotated_tensor(annotation: ast.expr, resolve) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value == "torch.Tensor"
    return isinstance(annotation, (ast.Name, ast.Attribute)) and resolve(annotation) in TENSOR_TYPES


# -- objects built by a torch constructor -----------------------------------------------------------
def built_accesses(scope_node: ast.AST, resolve: Callable[[ast.expr], str | None],
                   built_by: dict[str, tuple[str, int | None]]) -> Iterator[tuple[ast.Attribute, str]]:
    """Each ``X.attr`` (read) in the scope where X is an object a torch call built: ``built_by`` maps the call's
    qualified name to (the type, the position in the tuple it returns, or None for the call's own result).
    ``d = torch.distributions.Normal(0, 1)`` and ``leaves, spec = tree_flatten(x)`` bind such names, as does a
    call read directly (``Normal(0, 1).sample_n(3)``). A name bound more than once in the scope is not known."""
    counts: dict[str, int] = {}
    types: dict[str, str] = {}
    for node in _walk_scope(scope_node):
        for target in _targets(node):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
        if _rebinds_any(node, counts):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            found = built_by.get(resolve(node.value.func) or "")
            if found is None:
                continue
            kind, position = found
            target = node.targets[0]
            if position is None and isinstance(target, ast.Name):
                types[target.id] = kind
            elif position is not None and isinstance(target, ast.Tuple) and position < len(target.elts) \
                    and isinstance(target.elts[position], ast.Name) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                types[target.elts[position].id] = kind
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for argument in ast.walk(scope_node.args):
            if isinstance(argument, ast.arg):
                counts[argument.arg] = 2
    known = {name: kind for name, kind in types.items() if counts.get(name) == 1}
    for node in _walk_scope(scope_node):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in known:
            yield node, known[value.id]
        elif isinstance(value, ast.Call):
            found = built_by.get(resolve(value.func) or "")
            if found is not None and found[1] is None:
                yield node, found[0]


def _rebinds_any(node: ast.AST, counts: dict[str, int]) -> bool:
    """Imports, definitions and ``global``/``nonlocal`` make a name unknown (counted as bound twice)."""
    names: list[str] = []
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [node.name]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        names = list(node.names)
    for name in names:
        counts[name] = 2
    return bool(names)
