"""A family's fields from transformers' own record: the annotations say what the family reads and how it is checked
(its types), the record of the transformers configuration class says each field's default and other names.

``@family("qwen2", transformers="Qwen2Config", ...)`` (registry.py) hands the class here once it is made. For each
field of the class, inherited ones included, the record of Qwen2Config supplies:

- the default (the class's own, whatever a base class took from its own configuration class), and
- the other names a config.json may give the field (the class's ``attribute_map``: GPT-2's ``n_embd`` for
  ``hidden_size``), as pydantic's ``validation_alias``.

A field the family reads although its configuration class has none (a key the modeling code reads with getattr),
or whose default the family deliberately takes otherwise, is declared in the decorator with the reason; its default
is then the one written on the annotation. A default written anywhere else is refused when the class is made: it
would be a copy of the record, which the record now says once.

The record is ffncalc/transformers_defaults.json (tools/write_record.py writes it from
tests/expected/transformers_defaults.json, transformers 5.24's, trimmed to the fields families read): one
configuration class a line. It is read when the first declared class is made (never by a command that makes none),
and only the lines of the classes made are parsed as JSON.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from typing_extensions import Unpack

from ..schema import HFConfig

if TYPE_CHECKING:
    from .registry import Declaration

C = TypeVar("C", bound=type)

RECORD = Path(__file__).resolve().parent.parent / "transformers_defaults.json"


class DeclarationError(TypeError):
    """A family's declaration disagrees with the record (a field its class lacks, a default copied by hand …)."""


@cache
def _record_lines() -> dict[str, bytes]:
    """Each recorded class's line of the record (its JSON, after the name), by class name: the file is read and split
    once (under a millisecond), and only the lines of the classes a command makes are parsed."""
    found = {}
    for line in RECORD.read_bytes().split(b"\n"):
        if line.startswith(b'"'):  # '"Qwen2Config": {...},'; the first line is the header, the last the close
            end = line.index(b'"', 1)
            found[line[1:end].decode()] = line[end + 3 :].rstrip(b",")
    return found


@cache
def recorded(config_class: str) -> dict[str, Any]:
    """The record of transformers' CONFIG_CLASS: {"fields": {field: default}, "attribute_map": {name: field}}."""
    line = _record_lines().get(config_class)
    if line is None:
        raise DeclarationError(
            f"{config_class} is not in ffncalc/transformers_defaults.json: record it with tools/config_defaults.py "
            "(transformers in a side venv), then ship it with tools/write_record.py"
        )
    found: dict[str, Any] = json.loads(line)
    return found


def declare(cls: C, **declaration: Unpack[Declaration]) -> C:
    """CLS's fields defaulted and named from the record of TRANSFORMERS (its configuration class), and the family's
    metadata set as class data. READ_BEYOND: field → why the family reads it although TRANSFORMERS has no such field;
    OWN_DEFAULTS: field → why the default written on its annotation differs from the record's; OTHER_NAMES: field → why
    the names written on it (``Field(validation_alias=AliasChoices(...))``) are more than, or ordered otherwise than,
    the attribute_map's (a key the class's __init__ reads as the field: BLOOM's n_embed). READ_BEYOND and OTHER_NAMES
    inherit: a base's reason holds for a subclass unless its own configuration class has the field (then the record's
    default) or the subclass says otherwise."""
    transformers = declaration["transformers"]
    read_beyond = declaration.get("read_beyond")
    own_defaults = declaration.get("own_defaults")
    other_names = declaration.get("other_names")
    architecture = declaration.get("architecture")
    model_class = declaration.get("model_class")
    heads_divide_hidden = declaration.get("heads_divide_hidden")
    informational = declaration.get("informational", frozenset())
    routing = declaration.get("routing")
    if not (isinstance(cls, type) and issubclass(cls, HFConfig)):
        raise DeclarationError(f"{cls!r}: only an adapter (an HFConfig) takes its fields from the record")
    adapter: type[HFConfig] = cls
    record = recorded(transformers)
    if "undeclared_keys" in cls.__dict__:
        raise DeclarationError(f"{cls.__name__}: say its keys beyond {transformers} in read_beyond, with why")
    beyond = {**_inherited(adapter, "read_beyond"), **(read_beyond or {})}
    own = own_defaults or {}
    # A base's other names hold for a field this class inherits, not for one it annotates anew without them.
    annotated = inspect.get_annotations(cls)
    named = {
        name: why
        for name, why in _inherited(cls, "other_names").items()
        if name not in annotated or isinstance(cls.__pydantic_fields__[name].validation_alias, AliasChoices)
    }
    named |= other_names or {}
    written = _written_defaults(adapter)
    common = HFConfig.model_fields
    fields = dict(adapter.__pydantic_fields__)
    # pydantic gives a class its own copy of each inherited field, so the class's FieldInfo objects are changed in
    # place (a copy each would cost start-up: hundreds of fields a module); a base's are never touched.
    bases_fields = {id(info) for base in cls.__mro__[1:] for info in getattr(base, "__pydantic_fields__", {}).values()}
    for name, info in fields.items():
        if name in common:
            continue  # model_type, dtype, quantization_config …: every config's, read the same for all
        real = _recorded_name(record, name)
        if real is None and name in named and isinstance(info.validation_alias, AliasChoices):
            # the family's own name for a field it reads under the class's names too (Gemma's hidden_act)
            real = next(filter(None, (_recorded_name(record, str(c)) for c in info.validation_alias.choices)), None)
        if real is None:
            if name not in beyond:
                raise DeclarationError(
                    f"{adapter.__name__} reads {name}, which {transformers} has no field for: declare why in read_beyond"
                )
            if info.is_required():
                raise DeclarationError(
                    f"{adapter.__name__}.{name}, read beyond {transformers}, needs a written default"
                )
            continue
        beyond.pop(name, None)  # a base read it beyond its class; this class has it
        if name in own:
            if name not in written:
                raise DeclarationError(f"{adapter.__name__} names {name} in own_defaults but writes no default for it")
            if _same(_written_default(info), record["fields"][real]):
                raise DeclarationError(f"{adapter.__name__}.{name}'s own default is {transformers}'s recorded one")
            continue
        if name in written:
            raise DeclarationError(
                f"{adapter.__name__}.{name}: {transformers}'s record gives its default; write none "
                "(or say in own_defaults why this one differs)"
            )
        others = [other for other in _names_of(record, real) if other != name]
        alias = AliasChoices(name, *others) if others else None
        if name in named:
            written_names = info.validation_alias
            if not isinstance(written_names, AliasChoices) or not set(others) <= set(written_names.choices):
                raise DeclarationError(
                    f"{cls.__name__}.{name}: other_names says why, but its AliasChoices do not hold "
                    f"{transformers}'s names for it {[name, *others]}"
                )
            alias = written_names
        default = record["fields"][real]
        if info.default_factory is None and _same(info.default, default) and info.validation_alias == alias:
            continue  # already so (inherited from a base declared alike)
        if id(info) in bases_fields:  # pragma: no cover - pydantic gives each class copies of its bases' fields
            info = fields[name] = info._copy()
        _redefault(info, copy.deepcopy(default) if isinstance(default, (list, dict)) else default, alias)
    # (read_beyond may name a key with no field: one a validator reads from the raw config, or one a family leaves
    # unread on purpose, which the tests' generated configs still carry.)
    unknown = sorted((set(own) | set(other_names or {})) - set(fields))
    if unknown:
        raise DeclarationError(f"{adapter.__name__} declares reasons for {unknown}, which it has no field for")
    adapter.__pydantic_fields__ = fields
    # The schema is built on first validation (defer_build), from the fields as replaced here.
    assert not adapter.__pydantic_complete__, f"{adapter.__name__}'s schema was built before its fields were declared"
    adapter.config_class = transformers
    adapter.read_beyond = beyond
    adapter.own_defaults = own
    adapter.other_names = named
    adapter.undeclared_keys = frozenset(beyond)
    if architecture is not None:
        adapter.architecture = architecture
    if model_class is not None:
        adapter.default_model_class = model_class
    if heads_divide_hidden is not None:
        if not hasattr(adapter, "heads_divide_hidden"):
            raise DeclarationError(f"{adapter.__name__} checks no heads against the width (not a DecoderConfig)")
        setattr(adapter, "heads_divide_hidden", heads_divide_hidden)  # noqa: B010 - DecoderConfig's, not HFConfig's
    if informational:
        adapter.informational_fields = adapter.informational_fields | informational
    if routing is not None:
        adapter.routing_fields = routing
    return cls


def _redefault(info: FieldInfo, default: Any, alias: AliasChoices | None) -> None:
    """INFO with DEFAULT and the other names ALIAS, its type and constraints kept: what pydantic's (deprecated)
    FieldInfo.merge_field_infos(info, default=..., validation_alias=...) makes, without the copy."""
    info.default = default
    info.default_factory = None
    info.validation_alias = alias
    info._attributes_set.pop("default_factory", None)
    info._attributes_set.update(default=default, validation_alias=alias)


def _written_default(info: FieldInfo) -> Any:
    """The default written on a field: its value, or what its factory makes. The factories written in families take
    no argument (``list``, a block's own defaults); pydantic's get_default would first read the factory's signature,
    which for a builtin costs milliseconds a class."""
    if info.default_factory is None:
        return info.default
    return cast(Callable[[], Any], info.default_factory)()


def _inherited(cls: type, attribute: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for base in reversed(cls.__mro__[1:]):
        found.update(base.__dict__.get(attribute, {}))
    return found


def _written_defaults(cls: type[HFConfig]) -> set[str]:
    """The fields whose annotation in CLS's own body is given a default."""
    own = inspect.get_annotations(cls)
    return {name for name in own if name in cls.__pydantic_fields__ and not cls.__pydantic_fields__[name].is_required()}


def _recorded_name(record: dict[str, Any], name: str) -> str | None:
    """The configuration class's field that NAME is, or None: NAME itself, the field its attribute_map sends NAME to,
    or the field it sends to NAME (DeepseekV3Config keeps num_mtp_layers as num_nextn_predict_layers)."""
    fields, attribute_map = record["fields"], record["attribute_map"]
    if name in fields:
        return name
    if attribute_map.get(name) in fields:
        return str(attribute_map[name])
    return next((field for field, target in attribute_map.items() if target == name and field in fields), None)


def _names_of(record: dict[str, Any], field: str) -> list[str]:
    """FIELD and every name the class's attribute_map gives it, in the record's order: the names it maps to FIELD, and
    the name it maps FIELD to where that is no field (BailingHybridConfig keeps max_position_embeddings under
    model_max_length, so a model_max_length key sets it)."""
    names = [field] + [name for name, target in record["attribute_map"].items() if target == field]
    beyond = record["attribute_map"].get(field)
    return names + [beyond] if beyond is not None and beyond not in record["fields"] else names


def _same(one: Any, other: Any) -> bool:
    """Equal and of one type (True is not 1, 1.0 is not 1: a default is shown as it is)."""
    return type(one) is type(other) and one == other


def fields_from(**declaration: Unpack[Declaration]) -> Callable[[C], C]:
    """``declare`` as a decorator, for a base class that no model_type registers but that is validated as a family's
    own (DecoderConfig: LlamaConfig's fields, inherited by families not yet declared from the record)."""

    def decorate(cls: C) -> C:
        return declare(cls, **declaration)

    return decorate
