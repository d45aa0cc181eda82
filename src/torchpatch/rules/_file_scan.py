"""Looking around the whole file from a rule's hook: which torch names it uses, and where.

The engine dispatches a rule on one watched name; a few behaviour rules then need to know what else the
file (or the enclosing function) does, for example whether it ever calls ``torch.compile``. These helpers
walk the syntax tree once per question, resolving names in the scope each node sits in. They only run
when the rule was already triggered, so files that never mention the watched names pay nothing.
"""

from __future__ import annotations

import ast
from typing import Iterator

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _walk(ctx, node: ast.AST, scope) -> Iterator[tuple[ast.AST, object]]:
    """Every node under ``node`` with the engine scope its names resolve in."""
    for child in ast.iter_child_nodes(node):
        yield child, scope
        if isinstance(child, _DEFINITIONS):
            inner = ctx.scopes.scope_of.get(id(child), scope)
            header: list[ast.AST] = list(child.decorator_list)
            if isinstance(child, ast.ClassDef):
                header += [*child.bases, *child.keywords]
            else:
                header += [*child.args.defaults, *(d for d in child.args.kw_defaults if d is not None)]
            for part in header:
                yield part, scope
                yield from _walk(ctx, part, scope)
            for statement in child.body:
                yield statement, inner
                yield from _walk(ctx, statement, inner)
        else:
            yield from _walk(ctx, child, scope)


def named_uses(ctx, qualnames: frozenset[str] | set[str], root: ast.AST | None = None,
               scope=None) -> Iterator[tuple[ast.expr, str]]:
    """Name/Attribute nodes under ``root`` (default: the module) that resolve to one of ``qualnames``."""
    if root is None:
        root, scope = ctx.tree, ctx.scopes.module_scope
    last = {name.rpartition(".")[2] for name in qualnames}
    for node, node_scope in _walk(ctx, root, scope):
        if isinstance(node, ast.Attribute):
            if node.attr not in last:
                continue
        elif not (isinstance(node, ast.Name) and node.id in last):
            continue
        qualname = ctx.scopes.qualname(node, node_scope)
        if qualname in qualnames:
            yield node, qualname


def uses_any(ctx, qualnames: frozenset[str] | set[str], root: ast.AST | None = None, scope=None) -> bool:
    return next(named_uses(ctx, qualnames, root, scope), None) is not None


def calls_to(ctx, qualnames: frozenset[str] | set[str], root: ast.AST | None = None,
             scope=None) -> Iterator[tuple[ast.Call, str]]:
    """Calls under ``root`` whose callee resolves to one of ``qualnames``."""
    if root is None:
        root, scope = ctx.tree, ctx.scopes.module_scope
    last = {name.rpartition(".")[2] for name in qualnames}
    for node, node_scope in _walk(ctx, root, scope):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in last:
            continue
        qualname = ctx.scopes.qualname(func, node_scope)
        if qualname in qualnames:
            yield node, qualname


def enclosing_function(ctx, node: ast.AST) -> ast.AST | None:
    """The innermost function (or lambda) that holds ``node``, or None at module level."""
    parent = ctx.parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        parent = ctx.parent_of(parent)
    return parent
