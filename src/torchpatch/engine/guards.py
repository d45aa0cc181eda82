"""Compatibility code: which branch of a version or feature check runs only on old PyTorch releases.

Code such as ``torch.amp.GradScaler() if TORCH_GE_2_4 else torch.cuda.amp.GradScaler()`` or
``try: from torch.amp import x / except ImportError: from torch.cuda.amp import x`` keeps old
releases working on purpose; its old branch is not a finding.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

BODY_IS_OLD = "body"  # the if-branch runs on old releases (``if version < 2.4:``)
ELSE_IS_OLD = "else"  # the else-branch does (``if version >= 2.4:``, ``if hasattr(torch, "compile"):``)
BOTH = "both"  # a version check whose direction we cannot tell: neither branch is reported

_GUARD_WORDS = re.compile(
    r"version|greater|less|at_?least|_ge_|_gte|_lt_|torch_\d|_\d+_\d+(?:_\d+)?$|is_available_in", re.IGNORECASE)
_NEWER_WORDS = re.compile(r"greater|at_?least|_ge_|_gte|_ge$|newer|hasattr|_\d+_\d+(?:_\d+)?$", re.IGNORECASE)
_OLDER_WORDS = re.compile(r"less|_lt_|_lt$|older|below|lower", re.IGNORECASE)

#: Exceptions a fallback catches when the new API is missing or has another signature.
FALLBACK_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError", "NameError"})


def catches_missing_api(handler: ast.ExceptHandler) -> bool:
    """``except ImportError:`` and friends: the handler is the path for releases without the new API."""
    if handler.type is None:
        return False
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in types}
    return bool(names) and names <= FALLBACK_EXCEPTIONS


def old_branch(test: ast.expr, is_torch: Callable[[ast.expr], bool] = lambda expr: True) -> str | None:
    """Which branch of ``if test`` is the old-release path, or None when the test is no version check.

    ``is_torch`` tells whether an expression is (part of) torch: ``hasattr(x, ...)`` is a feature check
    only when ``x`` is.
    """
    if not _mentions_guard(test, is_torch):
        return None
    return _direction(test, is_torch)


def _is_hasattr(node: ast.AST) -> bool:
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "hasattr"


def _mentions_guard(test: ast.expr, is_torch: Callable[[ast.expr], bool] = lambda expr: True) -> bool:
    """Whether a name in the test reads like a version or feature check (a small walk: tests are short)."""
    stack = [test]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call and _is_hasattr(node):
            if node.args and is_torch(node.args[0]):
                return True
            continue
        if kind is ast.Name:
            if _GUARD_WORDS.search(node.id):
                return True
        elif kind is ast.Attribute:
            if _GUARD_WORDS.search(node.attr):
                return True
            stack.append(node.value)
        elif kind is ast.Call:
            stack.append(node.func)
            stack.extend(node.args)
        elif kind is ast.Compare:
            stack.append(node.left)
            stack.extend(node.comparators)
        elif kind is ast.BoolOp:
            stack.extend(node.values)
        elif kind is ast.UnaryOp:
            stack.append(node.operand)
        elif kind is ast.Subscript:
            stack.append(node.value)
    return False


def _flip(direction: str) -> str:
    return {BODY_IS_OLD: ELSE_IS_OLD, ELSE_IS_OLD: BODY_IS_OLD}.get(direction, BOTH)


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    return ""


def _direction(test: ast.expr, is_torch: Callable[[ast.expr], bool]) -> str:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _flip(_direction(test.operand, is_torch))
    if isinstance(test, ast.BoolOp):
        directions = {_direction(value, is_torch) for value in test.values if _mentions_guard(value, is_torch)}
        return directions.pop() if len(directions) == 1 else BOTH
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        operator = test.ops[0]
        version_on_left = _mentions_guard(test.left, is_torch)
        if isinstance(operator, (ast.Gt, ast.GtE)):
            return ELSE_IS_OLD if version_on_left else BODY_IS_OLD
        if isinstance(operator, (ast.Lt, ast.LtE)):
            return BODY_IS_OLD if version_on_left else ELSE_IS_OLD
        return BOTH
    if isinstance(test, ast.Call):
        name = _name_of(test.func)
        if name == "is_torch_version" and test.args and isinstance(test.args[0], ast.Constant):
            operator = str(test.args[0].value)
            if operator in ("<", "<="):
                return BODY_IS_OLD
            if operator in (">", ">="):
                return ELSE_IS_OLD
            return BOTH
    name = _name_of(test)
    if _OLDER_WORDS.search(name):
        return BODY_IS_OLD
    if _NEWER_WORDS.search(name):
        return ELSE_IS_OLD
    return BOTH
