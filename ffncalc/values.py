"""Frozen value classes: the spec's blocks, tensors and loaded configs.

A ``Value`` subclass declares its fields as a dataclass does (annotations, defaults after the
fields without) and behaves as a frozen dataclass: keyword or positional construction, equality
and hash by its fields (identical layers compare equal and are counted once), a readable repr,
no assignment. ``replace(value, field=…)`` is ``dataclasses.replace``.

Why not ``dataclasses``: a dataclass compiles six generated methods when its module is imported,
about 0.6 ms a class; ffncalc's start-up would spend more on that than on counting a model. These
methods are written once, here, and read the field list each subclass records.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

from typing_extensions import dataclass_transform  # typing has it from Python 3.11; pydantic depends on this

V = TypeVar("V", bound="Value")


@dataclass_transform(frozen_default=True)
class Value:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _field_names: ClassVar[frozenset[str]] = frozenset()
    _defaults: ClassVar[dict[str, Any]] = {}
    _key: ClassVar[Callable[[Any], Any]]  # the fields' values in order (hash)

    def __init_subclass__(cls) -> None:
        own = [
            name
            for name, annotation in inspect.get_annotations(cls).items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        ]
        cls._fields = tuple(dict.fromkeys((*cls._fields, *own)))
        cls._field_names = frozenset(cls._fields)
        cls._defaults = {**cls._defaults, **{name: cls.__dict__[name] for name in own if name in cls.__dict__}}
        cls._key = attrgetter(*cls._fields) if cls._fields else (lambda value: ())
        missing_default = [name for name in cls._fields if name not in cls._defaults]
        if missing_default and cls._fields.index(missing_default[-1]) > len(missing_default) - 1:
            raise TypeError(f"{cls.__name__}: field {missing_default[-1]!r} without a default follows fields with one")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        values = self._defaults.copy()
        if args:
            if len(args) > len(fields):
                raise TypeError(f"{type(self).__name__}() takes {len(fields)} fields, {len(args)} given")
            values.update(zip(fields, args, strict=False))
        if kwargs:
            if not self._field_names.issuperset(kwargs) or any(name in kwargs for name in fields[: len(args)]):
                raise TypeError(f"{type(self).__name__}() got unexpected or repeated fields {sorted(kwargs)}")
            values.update(kwargs)
        if len(values) < len(fields):
            missing = next(name for name in fields if name not in values)
            raise TypeError(f"{type(self).__name__}() missing field {missing!r}")
        object.__setattr__(self, "__dict__", values)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(type(self)._key(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={self.__dict__[name]!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete field {name!r}")


def replace(value: V, /, **changes: Any) -> V:
    """A copy of VALUE with CHANGES to its fields, as dataclasses.replace."""
    return type(value)(**{**value.__dict__, **changes})
