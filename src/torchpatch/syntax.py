"""Small pure helpers over Python syntax trees, shared by the linter's rules, the auditor's TorchScript
reader and the maintainer scripts (none of which may import the others)."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable


def nodes_under(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` (itself included): what ``ast.walk`` yields (in another order), without a
    generator per node (about four times faster)."""
    found = []
    stack = [node]
    pop, push, node_type = stack.pop, stack.append, ast.AST
    while stack:
        node = pop()
        found.append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, node_type))
            elif isinstance(value, node_type):
                push(value)
    return found


def names_read_in(node: ast.AST) -> set[str]:
    """The ids of every ``ast.Name`` under ``node`` (itself included)."""
    return {inner.id for inner in nodes_under(node) if type(inner) is ast.Name}


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


def mention_test(text: str, names: set[str], locator) -> Callable[[ast.stmt], bool]:
    """Whether a statement's lines (its decorators' included) hold the text of one of ``names`` or a
    non-ASCII character (``locator.line_starts``: the offset of each line): a statement without is sure to hold no ``ast.Name`` of those names and no
    import that binds one (an identifier is one token on one line; a non-ASCII one can be another
    spelling of an ASCII name, NFKC)."""
    offsets = []
    for name in names:
        at = text.find(name)
        while at >= 0:
            offsets.append(at)
            at = text.find(name, at + 1)
    if not text.isascii():
        offsets.extend(match.start() for match in re.finditer(r"[^\x00-\x7f]+", text))
    offsets.sort()
    line_starts = locator.line_starts

    def mentions(statement: ast.stmt) -> bool:
        decorators = getattr(statement, "decorator_list", None)
        start = line_starts[(decorators[0].lineno if decorators else statement.lineno) - 1]
        end = line_starts[statement.end_lineno] if statement.end_lineno < len(line_starts) else len(text)
        index = bisect.bisect_left(offsets, start)
        return index < len(offsets) and offsets[index] < end

    return mentions
