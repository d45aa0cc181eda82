"""The argument-level warnings read from the wheels (``data/warning_sites.json.gz``, scripts/build_warning_sites.py).

Each callable (as user code spells it; a class stands for its ``__init__``) has its parameters and a list of
warnings, each guarded by a condition: a list of atoms that must all hold at the call —

- ``["passed", p]``: ``p`` is given a value other than its default (torch tests ``p is not None``);
- ``["missing", p]``: ``p`` is left out or given ``None`` (``if p is None: warn``);
- ``["equals", p, values]`` / ``["differs", p, values]``: ``p`` (or its default) is / is not one of ``values``;
- ``["truthy", p]`` / ``["falsy", p]``: ``p`` (or its default) is true / false;
- ``["positional", args]``: arguments passed by position into ``*args``;
- ``["tensor", p]``: ``p`` is given something other than a number (a tensor source).

``evaluate`` answers whether a call meets a condition: True, False, or None when it depends on a value the
code does not spell out (a variable), in which case the rules stay quiet.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

from torchpatch._gunzip import gunzip
from torchpatch.rules.base import CallNeed

DATA_PATH = Path(__file__).with_name("data") / "warning_sites.json.gz"
_NO_DEFAULT = object()


@lru_cache(maxsize=1)
def callables() -> dict[str, dict]:
    return json.loads(gunzip(DATA_PATH.read_bytes()))["callables"]


def _literal(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_DEFAULT


def bind(call: ast.Call, site: dict) -> dict[str, ast.expr] | None:
    """Parameter name → argument node for a call (None when ``*`` / ``**`` unpacking hides the binding)."""
    bound: dict[str, ast.expr] = {}
    positional = site["positional"]
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            if index >= len(positional) and site.get("varargs"):
                bound.setdefault(site["varargs"], arg)  # torch.meshgrid(*tensors): only *tensors is reached
                continue
            return None
        if index < len(positional):
            bound[positional[index]] = arg
        elif site.get("varargs"):
            bound.setdefault(site["varargs"], arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        bound[keyword.arg] = keyword.value
    return bound


def _same(value, values) -> bool:
    return any(value == other and type(value) is type(other) for other in values)


class TorchObject:
    """A value the code names but does not spell as a literal: a torch dtype (``torch.float16``), which is
    true and equal to no literal."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, TorchObject) and other.name == self.name

    __hash__ = object.__hash__


#: torch's dtypes by the names user code spells them (``torch.float16``, ``torch.half``): objects, never falsy.
DTYPE_NAMES = frozenset(f"torch.{name}" for name in (
    "float16 half bfloat16 float32 float float64 double complex32 chalf complex64 cfloat complex128 cdouble "
    "uint8 int8 int16 short int32 int int64 long bool qint8 quint8 qint32 quint4x2 quint2x4 uint16 uint32 uint64 "
    "float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz").split())


def evaluate(atoms: list, bound: dict[str, ast.expr], site: dict,
             objects: dict[int, TorchObject] | None = None) -> bool | None:
    """Whether the call meets every atom (None: it depends on a value the code does not spell out).
    ``objects`` maps ``id(node)`` of arguments the caller resolved (a torch dtype) to their value."""
    defaults = site.get("defaults", {})
    objects = objects or {}
    answer: bool | None = True
    for kind, parameter, *values in atoms:
        node = bound.get(parameter)
        if isinstance(node, ast.Starred):
            held: bool | None = None  # *args may be empty
        elif kind == "positional":
            held = node is not None
        elif kind == "tensor":
            held = node is not None and not isinstance(_literal(node), (int, float, bool))
        elif node is None:
            default = defaults.get(parameter, _NO_DEFAULT if parameter not in defaults else None)
            if kind == "missing":
                held = True
            elif kind == "passed":
                held = False
            elif default is _NO_DEFAULT:
                held = None
            else:
                held = _holds(kind, default, values)
        else:
            value = objects[id(node)] if id(node) in objects else _literal(node)
            if kind == "missing":
                held = value is None
            elif kind == "passed":
                held = True if value is _NO_DEFAULT else not (
                    parameter in defaults and value == defaults[parameter] and type(value) is type(defaults[parameter])
                    or parameter not in defaults and value is None)
            elif value is _NO_DEFAULT:
                held = None
            else:
                held = _holds(kind, value, values)
        if held is False:
            return False
        if held is None:
            answer = None
    return answer


def call_need(site: dict, warnings: list[dict]) -> CallNeed | None:
    """What a call must show for one of ``warnings`` to hold there (Rule.call_needs), read off their atoms: for
    each warning, an argument one of its atoms needs given (an atom that does not hold with every argument left
    out: ``passed``, ``tensor``, ``positional``, a value test its default fails), else one its ``missing`` atom
    needs left out. None when a warning may hold whatever the call spells. A warning on ``reduction`` may hold
    through ``size_average=`` / ``reduce=`` too (torch derives the one from the others)."""
    positional = site["positional"]

    def position(parameter: str) -> int | None:
        return positional.index(parameter) if parameter in positional else None

    passed: set[tuple[str, int | None]] = set()
    missing: set[tuple[str, int | None]] = set()
    for warning in warnings:
        atoms = warning["when"]
        given = next((atom for atom in atoms if evaluate([atom], {}, site) is not True), None)
        if given is not None:
            kind, parameter = given[:2]
            passed.add((parameter, len(positional) if kind == "positional" else position(parameter)))
        else:
            left_out = next((atom for atom in atoms if atom[0] == "missing"), None)
            if left_out is None:
                return None
            missing.add((left_out[1], position(left_out[1])))
        if any(atom[1] == "reduction" for atom in atoms):
            passed.update((parameter, position(parameter)) for parameter in ("size_average", "reduce"))
    return CallNeed(passed=tuple(sorted(passed, key=str)), missing=tuple(sorted(missing, key=str)))


def _holds(kind: str, value, values: list) -> bool:
    if kind == "equals":
        return _same(value, values[0])
    if kind == "differs":
        return not _same(value, values[0])
    if kind == "truthy":
        return bool(value)
    return not value  # falsy


def describe(atoms: list) -> str:
    """The form a condition names, for a message: ``without `dim=` ``, ``with `reduce_range=` ``."""
    parts = []
    if any(atom[0] != "missing" for atom in atoms):
        atoms = [atom for atom in atoms if atom[0] != "missing"]  # preconditions: the form is the rest
    for kind, parameter, *values in atoms:
        if kind == "missing":
            parts.append(f"without `{parameter}=`")
        elif kind == "positional":
            parts.append("with positional arguments")
        elif kind == "equals" and len(values[0]) == 1:
            parts.append(f"with `{parameter}={values[0][0]!r}`")
        elif kind in ("tensor", "differs") and any(a[0] == "passed" and a[1] == parameter for a in atoms):
            continue
        elif kind == "tensor":
            parts.append(f"with a tensor `{parameter}`")
        elif kind == "falsy":
            parts.append(f"with a false `{parameter}=`")
        else:
            parts.append(f"with `{parameter}=`")
    return " and ".join(dict.fromkeys(parts)) or "called like this"


def messages(names, answers) -> tuple[str, ...]:
    """torch's messages, as torch prints them (whitespace folded), of the mined warnings of ``names`` that
    ``answers(warning, site)`` says a rule reports."""
    sites = callables()
    return tuple(sorted({" ".join(warning["message"].split()) for name in names
                         for warning in sites.get(name, {}).get("warnings", ()) if answers(warning, sites[name])}))
