"""Small pure helpers over Python syntax trees, shared by the linter's rules, the auditor's TorchScript
reader and the maintainer scripts (none of which may import the others)."""

from __future__ import annotations

import ast


def dotted_name(node: ast.AST) -> str | None:
    """``torch.cuda.amp`` for that chain of attributes on a name; None for anything else (calls, subscripts)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def chain_root(expr: ast.expr) -> str | None:
    """``torch`` for ``torch.cuda.amp``: the name an attribute chain starts from; None when it is not a name."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def annotations_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The parameter and return annotations of a ``def``: evaluated with the header, in the enclosing scope."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    found = [p.annotation for p in parameters if p is not None and p.annotation is not None]
    return found + [function.returns] if function.returns is not None else found
