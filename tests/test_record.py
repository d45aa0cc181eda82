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


def test_encoding_is_read_as_tokenize_reads_it_without_importing_it():
    """engine/source.py answers detect_encoding's question for UTF-8 files itself (issue 27: tokenize is a
    millisecond of a one-file check); every other file is tokenize's to judge."""
    import codecs
    import io
    import itertools
    import tokenize

    from torchpatch.engine.source import _utf8_encoding

    lines = [b"", b"\n", b"x=1\n", b"# comment\n", b"  \t\n", b"# -*- coding: utf-8 -*-\n", b"# coding=utf8\n",
             b"# coding: UTF_8\n", b"#coding:utf-8-unix\n", b"# vim: set fileencoding=latin-1 :\n", b"\xff\n",
             b"\xc3\xa9 = 1\n", b"x = 'coding'\n", b"# coding: bogus\n", b"#!python\r# coding: latin-1\r",
             b"\x0c# coding: utf-8\n"]
    answered = 0
    for first, second, third in itertools.product(lines, repeat=3):
        for bom in (b"", codecs.BOM_UTF8):
            data = bom + first + second + third
            mine = _utf8_encoding(data, bool(bom))
            if mine is not None:
                answered += 1
                assert mine == tokenize.detect_encoding(io.BytesIO(data).readline)[0], data
    assert answered > 2000


def test_locator_of_shares_one_line_table_per_text():
    """Locator.of (issue 27): the steps that place one file's findings share its line table; another text,
    even an equal one, gets its own."""
    from torchpatch.engine.source import Locator

    text = "import torch\nx = 1\r\ny = 2\n"
    first = Locator.of(text)
    assert Locator.of(text) is first and first.line_starts == Locator(text).line_starts
    other = "".join(["import torch\n", "x = 1\r\ny = 2\n"])  # equal, not the same object
    assert other == text and Locator.of(other) is not first and Locator.of(other).position(14) == (2, 1)
