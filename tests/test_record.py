"""torchpatch._record gives what @dataclass gave the check path's classes (issue 27: without compiling code at start-up)."""

from __future__ import annotations

import copy
import pickle

import pytest

from torchpatch._record import Factory, FrozenInstanceError, FrozenRecord, Record
from torchpatch.engine.resolve import Binding, Scope
from torchpatch.findings import Edit, Fix


class Point(FrozenRecord):
    x: int
    y: int = 0


class Bag(Record):
    name: str
    items: list[int] = Factory(list)
    label: str | None = None

    def __post_init__(self) -> None:
        self.name = self.name.strip()


def test_fields_defaults_and_factories_as_a_dataclass_takes_them():
    assert Point._fields == ("x", "y") and Bag._fields == ("name", "items", "label")
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(y=3, x=1).y) == (1, 0, 2, 3)
    first, second = Bag(" a "), Bag("b", label="l")
    first.items.append(1)
    assert (first.name, first.items, second.items, second.label) == ("a", [1], [], "l")  # a new list each
    assert not hasattr(Bag, "items")  # no shared class attribute for a factory default
    with pytest.raises(TypeError):
        Point()
    with pytest.raises(TypeError):
        Point(1, 2, 3)
    with pytest.raises(TypeError):
        Point(1, x=2)
    with pytest.raises(TypeError):
        Point(1, z=2)


def test_repr_eq_hash_and_frozen():
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1) and Point(1) != (1, 0)
    assert hash(Point(1, 2)) == hash(Point(1, 2)) and len({Point(1), Point(1), Point(2)}) == 2
    with pytest.raises(FrozenInstanceError):
        Point(1).x = 2
    with pytest.raises(AttributeError):
        del Point(1).x
    with pytest.raises(TypeError):
        hash(Bag("a"))  # mutable records are not hashable, as with @dataclass(eq=True)
    assert Bag("a") == Bag("a") and Bag("a", [1]) != Bag("a")


def test_replace_builds_anew():
    assert Point(1, 2).replace(y=5) == Point(1, 5)
    assert Bag(" a ", [1]).replace(label="x") == Bag("a", [1], "x")


def test_written_init_classes_compare_show_and_travel():
    edit = Edit(1, 2, "x")
    assert edit == Edit(1, 2, "x") and {edit: 1}[Edit(1, 2, "x")] == 1 and repr(edit) == "Edit(start=1, end=2, content='x')"
    with pytest.raises(FrozenInstanceError):
        edit.start = 0
    fix = Fix("m", [edit, Edit(1, 2, "x")], "safe")
    assert fix.edits == [edit] and fix.joint_edits == [] and "joint_fixes" not in repr(fix)
    assert fix == Fix("m", [edit], "safe", joint_fixes=[fix])  # joint_fixes is not compared
    for copied in (pickle.loads(pickle.dumps(fix)), copy.deepcopy(fix)):  # -j sends fixes between processes
        assert copied == fix and copied.edits[0] == edit
    scope = Scope("module", None)
    scope.bind(Binding("x", (1, 0)))
    assert "Scope(kind='module'" in repr(scope) and "scope=..." in repr(scope)  # a cycle is shown once
    assert not hasattr(scope, "__dict__") and not hasattr(Binding("x", (1, 0)), "__dict__")
