"""Helpers for rules that rewrite calls: where a reference sits, and positional arguments made keywords."""

from __future__ import annotations

import ast
import re

from torchpatch.rules._helpers import open_paren, has_starred
from torchpatch.rules.base import Edit
from torchpatch.syntax import annotations_of, chain_root

CALLEE = "callee"  # the function of a call: the call hook handles it
DECORATOR = "decorator"  # ``@name`` without a call
IMPORT = "import"
OTHER = "other"  # any other use: passed around, aliased, subclassed, isinstance(...)


def _header(statement: ast.stmt) -> list[ast.AST]:
    """The expressions of a statement that the walker visits with the statement itself."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = statement.args
        return [*statement.decorator_list, *arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    if isinstance(statement, ast.ClassDef):
        return [*statement.decorator_list, *statement.bases, *(k.value for k in statement.keywords)]
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
        return [h.type for h in statement.handlers if h.type is not None]
    if isinstance(statement, ast.Match):
        return [statement.subject, *(c.guard for c in statement.cases if c.guard is not None)]
    return [statement]


def reference_role(reference) -> str:
    """How a watched name is used where the engine found it (see the constants above)."""
    node = reference.node
    if reference.in_import:
        return IMPORT
    statement = reference.statement
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
            and any(d is node for d in statement.decorator_list):
        return DECORATOR
    for part in _header(statement):
        for inner in ast.walk(part):
            if isinstance(inner, ast.Call) and inner.func is node:
                return CALLEE
    return OTHER


def is_none_test(reference) -> bool:
    """Whether the watched name is only compared with ``None`` (``if autocast is None:``, sparseml 1.8's
    check after ``try: from torch.cuda.amp import autocast / except ImportError: autocast = None``): an
    availability probe that neither calls nor constructs the object. Only for rules whose name is still
    shipped in the target (deprecated, not removed): a removed attribute would fail before the test."""
    node = reference.node
    for part in _header(reference.statement):
        for inner in ast.walk(part):
            if type(inner) is ast.Compare and len(inner.ops) == 1 and type(inner.ops[0]) in (ast.Is, ast.IsNot):
                left, right = inner.left, inner.comparators[0]
                if (left is node and _is_none(right)) or (right is node and _is_none(left)):
                    return True
    return False


def is_class_test(reference) -> bool:
    """Whether the watched name is the class argument of ``isinstance``/``issubclass``, alone or in a tuple
    (``isinstance(scaler, torch.cuda.amp.GradScaler)``): a type test, not a use of the object."""
    node = reference.node
    for part in _header(reference.statement):
        for inner in ast.walk(part):
            if type(inner) is ast.Call and type(inner.func) is ast.Name and len(inner.args) == 2 \
                    and inner.func.id in ("isinstance", "issubclass"):
                classes = inner.args[1]
                if classes is node or (type(classes) is ast.Tuple and any(e is node for e in classes.elts)):
                    return True
    return False


def is_base_class(reference) -> bool:
    """Whether the watched name is a base of a class statement (``class S(torch.cuda.amp.GradScaler):``)."""
    statement = reference.statement
    return isinstance(statement, ast.ClassDef) and any(base is reference.node for base in statement.bases)


def _is_none(expr: ast.expr) -> bool:
    return type(expr) is ast.Constant and expr.value is None


def is_assignment_target(reference) -> bool:
    """Whether the watched name is what an assignment or ``del`` stores to (``torch.cuda.f = g``): the
    statement replaces torch's object and does not use it."""
    return isinstance(getattr(reference.node, "ctx", None), (ast.Store, ast.Del))


def in_annotation(reference) -> bool:
    """Whether the watched name sits in an annotation: of an annotated assignment (``x: T = ...``), of a
    parameter or of a return (``def f(x: T) -> T``)."""
    statement = reference.statement
    if isinstance(statement, ast.AnnAssign):
        annotations = [statement.annotation]
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        annotations = annotations_of(statement)
    else:
        return False
    return any(inner is reference.node for annotation in annotations for inner in ast.walk(annotation))


def root_name(expr: ast.AST) -> tuple[str, ...]:
    """The local name a Name/Attribute chain starts from, as an ``obsolete_names`` tuple."""
    root = chain_root(expr)
    return (root,) if root else ()


class Insertions:
    """Zero-width edits; two at the same offset are joined in the order they were added."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def add(self, offset: int, text: str) -> None:
        self._texts[offset] = self._texts.get(offset, "") + text

    def edits(self) -> list[Edit]:
        return [Edit(offset, offset, text) for offset, text in sorted(self._texts.items())]


def insert_first_argument(ctx, call: ast.Call, text: str, insertions: Insertions) -> None:
    position = open_paren(ctx, call)
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    if not items:
        insertions.add(position, text)
        return
    first = ctx.start(items[0])
    if re.fullmatch(r"(?:[ \t]*(?:#[^\n]*)?\r?\n)+[ \t]*", ctx.text[position:first]):
        # One argument a line: the new one gets its own line, with the same indentation.
        line_start = ctx.text.rfind("\n", 0, first) + 1
        indent = ctx.text[line_start:first]
        if indent.strip() == "":
            newline = "\r\n" if "\r\n" in ctx.text else "\n"
            insertions.add(first, f"{text},{newline}{indent}")
            return
    insertions.add(position, text + ", ")


def insert_after_positional(ctx, call: ast.Call, text: str, insertions: Insertions) -> bool:
    """Insert ``text`` (a keyword argument) after the positional arguments, before the keywords."""
    if not call.args:
        insert_first_argument(ctx, call, text, insertions)
        return True
    last = call.args[-1]
    if isinstance(last, ast.GeneratorExp):
        return False
    position = ctx.end(last)
    following = re.match(r"\s*([,)])", ctx.text[position:])
    # ``f((x))``: the node ends inside its own parentheses; only the call's ")" or a "," may follow.
    if following is None or following.group(1) == ")" and position + following.end() != ctx.end(call):
        return False
    insertions.add(position, f", {text}")
    return True


def positional_to_keywords(ctx, call: ast.Call, names: tuple[str, ...], insertions: Insertions) -> bool:
    """Prefix each positional argument with its parameter name; False when that is impossible."""
    if has_starred(call) or len(call.args) > len(names):
        return False
    previous = open_paren(ctx, call)
    for argument in call.args:
        # A parenthesized argument starts after its "(": ``f((x))`` cannot take ``name=`` there.
        if "(" in ctx.text[previous:ctx.start(argument)] or isinstance(argument, ast.GeneratorExp):
            return False
        previous = ctx.end(argument)
    for name, argument in zip(names, call.args):
        insertions.add(ctx.start(argument), f"{name}=")
    return True
