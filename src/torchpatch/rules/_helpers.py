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
    """The edit that deletes one argument (positional or keyword) with one separating comma, in the
    call's layout and keeping every comment that is not on the argument's own line(s).

    An argument on lines of its own goes with those lines (and a comment at their end); a comment line
    above or below it stays; ``f(a, b)`` loses ``, b`` and ``f(a, b, c)`` loses ``b, ``.
    """
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    index = next(i for i, item in enumerate(items) if item is node)
    return _remove_item(ctx, items, index, open_paren(ctx, call), ctx.end(call) - 1)


def remove_element(ctx, sequence: ast.List, index: int) -> Edit:
    """:func:`remove_argument` for one element of a list literal."""
    return _remove_item(ctx, sequence.elts, index, ctx.start(sequence) + 1, ctx.end(sequence) - 1)


def _remove_item(ctx, items: list[ast.AST], index: int, open_at: int, close_at: int) -> Edit:
    """Delete ``items[index]`` from between the brackets at ``open_at - 1`` and ``close_at``."""
    text = ctx.text
    node = items[index]
    previous = items[index - 1] if index else None
    following = items[index + 1] if index + 1 < len(items) else None
    gap_start = ctx.end(previous) if previous is not None else open_at
    comma_before = _comma_in(text, gap_start, ctx.start(node)) if previous is not None else None
    # A parenthesized positional argument, ``f(a, (b))``: its parentheses go with it.
    opens = _code_of(text, comma_before + 1 if comma_before is not None else gap_start, ctx.start(node)).count("(")
    start = ctx.start(node)
    for _ in range(opens):
        start = text.rindex("(", 0, start)
    end = ctx.end(node)
    for _ in range(opens):
        end = text.index(")", end) + 1
    comma_after = _comma_in(text, end, ctx.start(following) if following is not None else close_at)
    line_start = text.rfind("\n", 0, start) + 1
    after = comma_after + 1 if comma_after is not None else end
    rest = re.match(r"[ \t]*(?:#[^\r\n]*)?(?:\r?\n|\r)", text[after:])
    own_lines = not text[line_start:start].strip() and rest is not None and line_start >= open_at
    if own_lines:
        if comma_after is None and comma_before is not None:
            # It was last: the comma before it goes instead (and the comment lines between stay).
            return Edit(comma_before, after + rest.end(), text[comma_before + 1:line_start])
        if previous is None and following is None and not text[open_at:close_at].replace(
                text[line_start:after + rest.end()], "", 1).strip():
            return Edit(open_at, close_at, "")  # ``f(\n    verbose=False,\n)`` becomes ``f()``
        return Edit(line_start, after + rest.end(), "")
    if comma_after is not None:
        if following is not None and "\n" not in text[comma_after:ctx.start(following)]:
            return Edit(start, _start_with_parens(text, comma_after + 1, ctx.start(following)), "")
        # The comma ends the line (a comment may follow): ``b, verbose=False,  # c`` keeps ``b,  # c``.
        blank_before = len(text[line_start:start]) - len(text[line_start:start].rstrip(" \t"))
        return Edit(start - blank_before if previous is not None else start, comma_after + 1, "")
    if comma_before is None:
        return Edit(start, end, "")
    # ``f(a, verbose=False)``; after a comment or a line break the comma and the argument go, the lines stay.
    return Edit(comma_before, end, text[comma_before + 1:start] if "\n" in text[comma_before:start] else "")


def _code_of(text: str, start: int, end: int) -> str:
    """text[start:end] without its comments (between two arguments only commas, brackets, blanks and comments)."""
    return re.sub(r"#[^\r\n]*", "", text[start:end])


def _comma_in(text: str, start: int, end: int) -> int | None:
    """The offset of the comma between two arguments (text[start:end] holds no strings), outside comments."""
    position = start
    while position < end:
        character = text[position]
        if character == "#":
            newline = text.find("\n", position, end)
            position = end if newline < 0 else newline
        elif character == ",":
            return position
        position += 1
    return None


def _start_with_parens(text: str, start: int, node_start: int) -> int:
    """Where the next argument begins, its own opening parentheses included."""
    position = node_start
    while position > start and text[position - 1] in "( \t":
        position -= 1
    while position < node_start and text[position] in " \t":
        position += 1
    return position


def replace_node(ctx, node: ast.AST, text: str) -> Edit:
    return Edit(ctx.start(node), ctx.end(node), text)


def public_and_defining_names(public_module: str, defined_in: dict[str, str]) -> dict[str, str]:
    """``{"torch.jit.script": "script", "torch.jit._script.script": "script", ...}``: both spellings of each name."""
    names = {}
    for leaf, module in defined_in.items():
        names[f"{public_module}.{leaf}"] = leaf
        names[f"{module}.{leaf}"] = leaf
    return names
