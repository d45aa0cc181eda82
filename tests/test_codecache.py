"""The dataclass methods compiled once (torchpatch._codecache, issue 27) are the methods ``dataclasses`` makes."""

from __future__ import annotations

import dataclasses
import os
import textwrap

from torchpatch import _codecache

SOURCE = textwrap.dedent('''
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Edit:
        start: int
        end: int
        content: str = ""

    @dataclasses.dataclass
    class Fix:
        message: str
        edits: list = dataclasses.field(default_factory=list)
        rank: int = dataclasses.field(default=0, compare=False, repr=False)
''')


def _define() -> dict:
    namespace: dict = {}
    exec(compile(SOURCE, "<test>", "exec"), namespace)
    return namespace


def _behaviour(namespace: dict) -> tuple:
    edit, fix = namespace["Edit"](1, 2, "x"), namespace["Fix"]("m", [namespace["Edit"](0, 1)], rank=3)
    try:
        edit.start = 5
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    return (repr(edit), repr(fix), edit == namespace["Edit"](1, 2, "x"), hash(edit) == hash(namespace["Edit"](1, 2, "x")),
            fix == namespace["Fix"]("m", [namespace["Edit"](0, 1)], rank=9), frozen, namespace["Fix"]("n").edits,
            [f.name for f in dataclasses.fields(namespace["Fix"])], namespace["Edit"].__doc__)


def test_cached_methods_behave_as_compiled_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHPATCH_MANIFEST_DIR", str(tmp_path))
    plain = _behaviour(_define())
    with _codecache.compiled_dataclasses():
        first = _behaviour(_define())  # compiled, then saved
    assert "exec" not in vars(dataclasses)  # the module is left as it was
    (saved,) = [name for name in os.listdir(tmp_path) if name.startswith("dataclass-code-")]
    with _codecache.compiled_dataclasses():
        second = _behaviour(_define())  # from the file
    assert plain == first == second


def test_an_unreadable_cache_only_costs_the_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHPATCH_MANIFEST_DIR", str(tmp_path))
    path = _codecache._cache_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as stream:
        stream.write(b"not marshal data")
    with _codecache.compiled_dataclasses():
        assert _behaviour(_define()) == _behaviour(_define())
    with _codecache.compiled_dataclasses():  # rewritten
        assert _behaviour(_define())[0] == "Edit(start=1, end=2, content='x')"
