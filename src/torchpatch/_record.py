"""Record classes, as ``@dataclass`` makes them, without generating code when the module is imported.

``dataclasses`` writes each class's ``__init__``, ``__repr__`` and ``__eq__`` as source text and compiles it at
import: about 0.65 ms per class, 16 ms for the 24 classes a one-file ``torchpatch check`` used (issue 27), and it
imports ``inspect``. A ``Record`` subclass declares its fields as a dataclass does (annotations, defaults,
``Factory(list)`` for ``field(default_factory=list)``) or names them in ``_fields`` and writes its own
``__init__`` (the classes built per node or per finding do: a written ``__init__`` is as fast as a generated
one). ``Record`` gives what ``@dataclass`` would: an ``__init__`` taking the fields by position or keyword
(then ``__post_init__``), ``repr`` of the fields, ``==`` between records of the same class comparing them, and
no hash; ``replace`` is ``dataclasses.replace``. ``FrozenRecord`` is ``@dataclass(frozen=True)``: read-only
after ``__init__`` (a written one sets fields with ``object.__setattr__``), hashed by its fields.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from typing import Any

#: The ids of the records whose repr is being built (repr of a record that holds itself stops there).
_BEING_SHOWN: set[int] = set()


class FrozenInstanceError(AttributeError):
    """An attempt to set or delete a field of a FrozenRecord (dataclasses.FrozenInstanceError's role)."""


class Factory:
    """A field's default made anew for each record (``field(default_factory=...)``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Record:
    __slots__ = ()
    #: The fields in order: set by __init__, shown by repr, compared by ==, copied by replace.
    _fields: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}
    #: The fields left out of == (dataclasses' ``compare=False``) and of repr (``repr=False``).
    _not_compared: frozenset[str] = frozenset()
    _not_shown: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations = cls.__dict__.get("__annotations__", {})
        if "_fields" in cls.__dict__ or not annotations:
            return
        names = [name for name, annotation in annotations.items()
                 if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))]
        cls._fields = (*cls._fields, *(name for name in names if name not in cls._fields))
        cls._defaults = {**cls._defaults, **{name: cls.__dict__[name] for name in names if name in cls.__dict__}}
        for name, default in cls._defaults.items():
            if type(default) is Factory and name in cls.__dict__:
                delattr(cls, name)  # as dataclasses leaves no class attribute for a default_factory field

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} given")
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        assign = object.__setattr__
        defaults = self._defaults
        for name in fields:
            if name in values:
                value = values[name]
            elif name in defaults:
                value = defaults[name]
                if type(value) is Factory:
                    value = value.make()
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
            assign(self, name, value)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def _compared_values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields if name not in self._not_compared)

    def __repr__(self) -> str:
        if id(self) in _BEING_SHOWN:
            return "..."  # a record that holds itself (a scope's bindings hold the scope), as dataclasses shows it
        _BEING_SHOWN.add(id(self))
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields if name not in self._not_shown)
        finally:
            _BEING_SHOWN.discard(id(self))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._compared_values() == other._compared_values()  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable: as @dataclass leaves a class with eq and no frozen

    def replace(self, **changes: Any):
        """A new record of the same class with ``changes`` (dataclasses.replace: built by ``__init__``)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)


class FrozenRecord(Record):
    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._compared_values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
