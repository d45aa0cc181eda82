"""Small pure helpers for rules: reading call arguments and building minimal edits."""

from __future__ import annotations

import ast
import re

from torchpatch.rules.base import Edit


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for item in call.keywords:
        if item.arg == name:
            return item
    return None


def argument(call: ast.Call, name: str, position: int) -> tuple[ast.AST, ast.expr] | None:
    """An argument passed by keyword or at its positional index: (the node to report, its value)."""
    found = keyword(call, name)
    if found is not None:
        return found, found.value
    if len(call.args) > position and not has_star_args(call):
        return call.args[position], call.args[position]
    return None


def has_star_args(call: ast.Call) -> bool:
    """``*args`` or ``**kwargs``: the call's real arguments are not visible."""
    return has_starred(call) or has_double_star(call)


def has_starred(call: ast.Call) -> bool:
    """``*args`` among the positional arguments."""
    return any(isinstance(arg, ast.Starred) for arg in call.args)


def has_double_star(call: ast.Call) -> bool:
    return any(k.arg is None for k in call.keywords)


def literal(node: ast.AST | None):
    """The value of a literal (True, 3, "x", (-1, 0)), or raise ValueError."""
    if node is None:
        raise ValueError("no value")
    return ast.literal_eval(node)


def is_literal(node: ast.AST | None, value) -> bool:
    try:
        found = literal(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return type(found) is type(value) and found == value


def open_paren(ctx, call: ast.Call) -> int:
    """Offset just after the call's opening parenthesis."""
    position = ctx.end(call.func)
    index = ctx.text.index("(", position)
    return index + 1


def arguments_end(ctx, call: ast.Call) -> int:
    """Offset just after the last argument (or after the '(' when there is none)."""
    items = [*call.args, *call.keywords]
    if not items:
        return open_paren(ctx, call)
    last = max(items, key=lambda node: (node.end_lineno, node.end_col_offset))
    return ctx.end(last)


def add_keyword(ctx, call: ast.Call, text: str) -> Edit:
    """Insert ``text`` (e.g. ``weights_only=True``) as the call's last argument, in the call's layout.

    One argument a line gets one more line (with its trailing comma when the call has one);
    ``f(a, b,)`` becomes ``f(a, b, text,)``.
    """
    position = arguments_end(ctx, call)
    items = [*call.args, *call.keywords]
    if not items:
        return Edit(position, position, text)
    last = max(items, key=lambda node: (node.end_lineno, node.end_col_offset))
    line_start = ctx.text.rfind("\n", 0, ctx.start(last)) + 1
    indent = ctx.text[line_start:ctx.start(last)]
    own_line = indent.strip() == "" and line_start > open_paren(ctx, call)
    newline = "\r\n" if "\r\n" in ctx.text else "\n"
    trailing = re.match(r"[ \t]*,", ctx.text[position:])
    if trailing:
        after_comma = position + trailing.end()
        rest_of_line = re.match(r"[ \t]*(?:#[^\r\n]*)?\r?\n", ctx.text[after_comma:])
        if own_line and rest_of_line:
            at = after_comma + rest_of_line.end()
            return Edit(at, at, f"{indent}{text},{newline}")
        return Edit(after_comma, after_comma, f" {text},")
    closing_later = ctx.text[position:ctx.end(call)].count("\n") > 0
    if own_line and closing_later:
        return Edit(position, position, f",{newline}{indent}{text}")
    return Edit(position, position, f", {text}")


def add_first_argument(ctx, call: ast.Call, text: str) -> Edit:
    """Insert ``text`` as the first positional argument."""
    position = open_paren(ctx, call)
    separator = ", " if [*call.args, *call.keywords] else ""
    return Edit(position, position, f"{text}{separator}")


def remove_argument(ctx, call: ast.Call, node: ast.AST) -> Edit:
    """Delete one argument (positional or keyword) with its separating comma."""
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    index = next(i for i, item in enumerate(items) if item is node)
    start, end = ctx.start(node), ctx.end(node)
    if index + 1 < len(items):
        return Edit(start, ctx.start(items[index + 1]), "")
    if index > 0:
        previous_end = ctx.end(items[index - 1])
        return Edit(previous_end, end, "")
    # The only argument: also drop a trailing comma.
    tail = re.match(r"\s*,", ctx.text[end:])
    return Edit(start, end + (tail.end() if tail else 0), "")


def replace_node(ctx, node: ast.AST, text: str) -> Edit:
    return Edit(ctx.start(node), ctx.end(node), text)


def public_and_defining_names(public_module: str, defined_in: dict[str, str]) -> dict[str, str]:
    """``{"torch.jit.script": "script", "torch.jit._script.script": "script", ...}``: both spellings of each name."""
    names = {}
    for leaf, module in defined_in.items():
        names[f"{public_module}.{leaf}"] = leaf
        names[f"{module}.{leaf}"] = leaf
    return names
