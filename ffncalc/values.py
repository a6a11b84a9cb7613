"""Frozen value classes: the spec's blocks, tensors and loaded configs, and every small record a command passes along
(its options, headlines, overrides, hardware).

A ``Value`` subclass declares its fields as a dataclass does (annotations, defaults after the
fields without) and behaves as a frozen dataclass: keyword or positional construction, equality
and hash by its fields (identical layers compare equal and are counted once), a readable repr,
no assignment. ``replace(value, field=…)`` is ``dataclasses.replace``.

Why not ``dataclasses``: a dataclass compiles six generated methods when its module is imported,
about 0.6 ms a class; ffncalc's start-up would spend more on that than on counting a model (measured with
callgrind: the 14 option, headline and override records of `train` cost 73 M instructions as dataclasses, 8 % of
its start-up, and next to nothing as values). Here
equality, hash, repr and immutability are written once, and read the field list each subclass
records; only ``__init__`` is generated, as a dataclass's is (a generic one is three times slower,
and a config makes some 240 values), and only for a class that has made COMPILED_AFTER values: a result
class makes one or two, and compiling its __init__ would cost more than making them the generic way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

from typing_extensions import dataclass_transform  # typing has it from Python 3.11; pydantic depends on this

V = TypeVar("V", bound="Value")
_HASH = "__hash"  # where a value keeps its hash once computed: not a field, never compared or copied


@dataclass_transform(frozen_default=True)
class Value:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _key: ClassVar[Callable[[Any], Any]]  # the fields' values in order (hash)
    _kw_only: ClassVar[bool] = False  # fields given by name only (a base declared with kw_only_default=True)
    _field_set: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls) -> None:
        own = [
            name
            for name, annotation in inspect.get_annotations(cls).items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        ]
        cls._fields = tuple(dict.fromkeys((*cls._fields, *own)))
        cls._defaults = {**cls._defaults, **{name: cls.__dict__[name] for name in own if name in cls.__dict__}}
        cls._key = attrgetter(*cls._fields) if cls._fields else (lambda value: ())
        cls._field_set = frozenset(cls._fields)
        if "__init__" not in cls.__dict__:  # its own, made when its first value is (not its base's)
            cls.__init__ = Value.__init__  # type: ignore[method-assign]
        missing_default = [name for name in cls._fields if name not in cls._defaults]
        if missing_default and not cls._kw_only and cls._fields.index(missing_default[-1]) > len(missing_default) - 1:
            raise TypeError(f"{cls.__name__}: field {missing_default[-1]!r} without a default follows fields with one")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The class's first values are made by reading its field list; from the COMPILED_AFTER-th on, the class has
        its own compiled __init__. Compiling one costs as much as making some 30 values the generic way: a spec
        makes hundreds of Linears and Norms, a command one report of each result class."""
        cls = type(self)
        made = cls.__dict__.get("_made", 0) + 1
        if made < COMPILED_AFTER:
            type.__setattr__(cls, "_made", made)
            _set_fields(self, args, kwargs)
            return
        cls.__init__ = _generated_init(cls)  # type: ignore[method-assign]
        cls.__init__(self, *args, **kwargs)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = type(self)._key
        return bool(key(self) == key(other))

    def __hash__(self) -> int:
        """The fields' hash, computed once: a value is immutable, and builders share blocks (one Norm, one
        attention) between layers, so a layer's hash reads its blocks' cached hashes instead of walking them."""
        found: int | None = self.__dict__.get(_HASH)
        if found is None:
            found = self.__dict__[_HASH] = hash(type(self)._key(self))
        return found

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={self.__dict__[name]!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete field {name!r}")


COMPILED_AFTER = 8


def _set_fields(value: Value, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What a generated __init__ does, read from the field list: positional then named values, defaults for the rest.
    Arguments a call would refuse are given to the compiled __init__, which raises Python's own TypeError."""
    cls = type(value)
    fields, defaults = cls._fields, cls._defaults
    if len(args) <= (0 if cls._kw_only else len(fields)) and cls._field_set.issuperset(kwargs):
        given = dict(zip(fields, args))
        if not given.keys() & kwargs.keys():
            given.update(kwargs)
            if all(name in given or name in defaults for name in fields):
                object.__setattr__(value, "__dict__", {name: given.get(name, defaults.get(name)) for name in fields})
                return
    _generated_init(cls)(value, *args, **kwargs)


def _generated_init(cls: type[Value]) -> Callable[..., None]:
    """CLS's __init__, compiled from its field list as dataclasses does: def __init__(self, kind, dim, bias=…)
    that sets the instance's __dict__ in field order. The names are the class's own annotations."""
    defaults = {f"_default_{name}": value for name, value in cls._defaults.items()}
    parameters = ", ".join(name + (f"=_default_{name}" if name in cls._defaults else "") for name in cls._fields)
    values = ", ".join(f"{name!r}: {name}" for name in cls._fields)
    if cls._kw_only:
        parameters = "*, " + parameters
    source = f"def __init__(self, {parameters}):\n    _set(self, '__dict__', {{{values}}})\n"
    namespace: dict[str, Any] = {"_set": object.__setattr__, **defaults}
    exec(compile(source, f"<{cls.__qualname__}.__init__>", "exec"), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def field_names(cls: type[Value]) -> tuple[str, ...]:
    """CLS's fields in order, its bases' first, as dataclasses.fields names them."""
    return cls._fields


def field_values(value: Value) -> dict[str, Any]:
    """VALUE's fields by name, in order; nested values stay values (dataclasses.asdict would copy them into dicts)."""
    fields = value.__dict__
    return {name: fields[name] for name in value._fields}


def replace(value: V, /, **changes: Any) -> V:
    """A copy of VALUE with CHANGES to its fields, as dataclasses.replace."""
    fields = value.__dict__
    return type(value)(**{name: fields[name] for name in value._fields if name not in changes}, **changes)
