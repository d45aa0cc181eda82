"""Looking around the whole file from a rule's hook: which torch names it uses, and where.

The engine dispatches a rule on one watched name; a few behaviour rules then need to know what else the
file (or the enclosing function) does, for example whether it ever calls ``torch.compile``. These helpers
walk the syntax tree once per question, resolving names in the scope each node sits in. They only run
when the rule was already triggered, so files that never mention the watched names pay nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def scoped_nodes(ctx, node: ast.AST, scope) -> Iterator[tuple[ast.AST, object]]:
    """Every node under ``node`` with the engine scope its names resolve in."""
    for child in ast.iter_child_nodes(node):
        yield child, scope
        yield from _scoped_inside(ctx, child, scope)


def _scoped_inside(ctx, node: ast.AST, scope) -> Iterator[tuple[ast.AST, object]]:
    if not isinstance(node, _DEFINITIONS):
        yield from scoped_nodes(ctx, node, scope)
        return
    # Decorators, defaults and bases are evaluated where the definition is; the body in its own scope.
    header: list[ast.AST] = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        header += [*node.bases, *node.keywords]
    else:
        header += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    for part in header:
        yield part, scope
        yield from _scoped_inside(ctx, part, scope)
    inner = ctx.scopes.scope_of.get(id(node), scope)
    for statement in node.body:
        yield statement, inner
        yield from _scoped_inside(ctx, statement, inner)


#: The last file's answers, as one ``(tree, {qualnames: uses})`` entry replaced whole (so two threads never share
#: a dictionary): memory stays flat across a run, and holding the tree keeps its identity from being reused.
_LAST: list = [None]


def named_uses(ctx, qualnames: frozenset[str]) -> list[tuple[ast.expr, str]]:
    """Name/Attribute nodes of the file that resolve to one of ``qualnames``, in source order (cached per file)."""
    entry = _LAST[0]
    if entry is None or entry[0] is not ctx.tree:
        entry = _LAST[0] = (ctx.tree, {})
    cache = entry[1]
    if qualnames not in cache:
        last = {name.rpartition(".")[2] for name in qualnames}
        found = []
        for node, node_scope in scoped_nodes(ctx, ctx.tree, ctx.scopes.module_scope):
            if isinstance(node, ast.Attribute):
                if node.attr not in last:
                    continue
            elif not isinstance(node, ast.Name):
                continue  # a bare name may be an alias (``import init_device_mesh as idm``): resolve them all
            qualname = ctx.scopes.qualname(node, node_scope)
            if qualname in qualnames:
                found.append((node, qualname))
        cache[qualnames] = sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))
    return cache[qualnames]


def uses_any(ctx, qualnames: frozenset[str]) -> bool:
    return bool(named_uses(ctx, qualnames))


def enclosing_def_or_module(ctx, node: ast.AST) -> ast.AST:
    """The innermost ``def`` holding ``node`` (lambdas do not count), else the module."""
    parent = ctx.parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = ctx.parent_of(parent)
    return ctx.tree if parent is None else parent


def defines_function(ctx, name: str) -> bool:
    """The file defines a function or method called ``name`` (then a call of it may be the file's own)."""
    return any(type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name == name
               for node in ast.walk(ctx.tree))


def enclosing_function(ctx, node: ast.AST) -> ast.AST | None:
    """The innermost function (or lambda) that holds ``node``, or None at module level."""
    parent = ctx.parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        parent = ctx.parent_of(parent)
    return parent
