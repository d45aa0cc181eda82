"""Helpers for fixes that rewrite or delete a whole statement (a call used as an expression statement)."""

from __future__ import annotations

import ast
import re

from torchpatch.rules.base import Edit

_REST_OF_LINE = re.compile(r"[ \t]*(#[^\r\n]*)?(\r\n|\n|\r|$)")


def standalone_call_statement(ctx, call: ast.Call) -> ast.Expr | None:
    """The statement when ``call`` is the whole statement and has its lines to itself, else None."""
    statement = ctx.statement
    if not isinstance(statement, ast.Expr) or statement.value is not call:
        return None
    start = ctx.start(statement)
    line_start = ctx.text.rfind("\n", 0, start) + 1
    if ctx.text[line_start:start].strip(" \t"):
        return None  # ``if x: call()`` or ``a = 1; call()``
    if _REST_OF_LINE.match(ctx.text, ctx.end(statement)) is None:
        return None  # ``call(); more()``
    return statement


def indentation(ctx, statement: ast.stmt) -> str:
    start = ctx.start(statement)
    return ctx.text[ctx.text.rfind("\n", 0, start) + 1:start]


def newline(ctx) -> str:
    return "\r\n" if "\r\n" in ctx.text else "\n"


def has_multiline_string(node: ast.AST) -> bool:
    """Re-indenting the node's text would change a string that spans lines."""
    for child in ast.walk(node):
        if isinstance(child, (ast.Constant, ast.JoinedStr)) and child.end_lineno != child.lineno:
            return True
    return False


def enclosing_body(tree: ast.Module, statement: ast.stmt) -> list[ast.stmt] | None:
    """The statement list that holds ``statement``."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(item is statement for item in body):
                return body
        for case in getattr(node, "cases", ()) or ():
            if any(item is statement for item in case.body):
                return case.body
    return None


def delete_statement(ctx, statement: ast.stmt) -> Edit | None:
    """Remove a statement that has its lines to itself; ``pass`` when it is alone in its block."""
    body = enclosing_body(ctx.tree, statement)
    if body is None:
        return None
    start = ctx.start(statement)
    line_start = ctx.text.rfind("\n", 0, start) + 1
    rest = _REST_OF_LINE.match(ctx.text, ctx.end(statement))
    if rest is None:
        return None
    if len(body) == 1 and body is not ctx.tree.body:
        return Edit(start, ctx.end(statement), "pass")
    return Edit(line_start, rest.end(), "")


def apply_local(text: str, base: int, edits: list[Edit]) -> str:
    """Apply edits (absolute offsets) to ``text``, which starts at offset ``base``."""
    parts, position = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        parts.append(text[position:edit.start - base])
        parts.append(edit.content)
        position = edit.end - base
    parts.append(text[position:])
    return "".join(parts)
