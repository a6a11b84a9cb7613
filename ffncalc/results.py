"""The base of every result ffncalc returns, and what a report says about the model it describes.

Results are frozen values with typed fields and exact integers, built without validation (ffncalc makes them
from figures it computed), rendered as tables by ``render`` and printed as one JSON document by ``JSON``.
The JSON (and its schema) comes from pydantic: ``json_model`` mirrors a result class as a pydantic model
with the same name, docstring, fields and defaults, made only when a document is printed.

Why not pydantic models throughout: a pydantic class costs about 1.5 M instructions to create and 3.2 M more
to build its validator when its first instance is made; `train` makes 32 result classes and builds 15, a tenth of
its start-up (callgrind), for validation its own figures never needed.
"""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import dataclass_transform

from .values import Value, field_names, replace

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass_transform(frozen_default=True, kw_only_default=True)
class Result(Value):
    """A result: fields given by name (a report's own fields follow ModelInfo's, which all have defaults)."""

    _kw_only = True


def json_model(cls: type[Result]) -> type[BaseModel]:
    """CLS as a pydantic model of the same name, docstring, fields and defaults: what the JSON documents hold and the JSON
    Schema describes. Fields holding results hold their mirrors. Made once a class."""
    mirror = _MIRRORS.get(cls)
    if mirror is None:
        mirror = _MIRRORS[cls] = _mirror(cls)
    return mirror


_MIRRORS: dict[type[Result], type[BaseModel]] = {}


def _mirror(cls: type[Result]) -> type[BaseModel]:
    from pydantic import ConfigDict, create_model

    hints = typing.get_type_hints(cls)
    defaults = cls._defaults
    fields: dict[str, Any] = {name: (_mirrored(hints[name]), defaults.get(name, ...)) for name in field_names(cls)}
    return create_model(
        cls.__name__,
        __config__=ConfigDict(from_attributes=True, frozen=True),
        __doc__=cls.__doc__,
        __module__=cls.__module__,
        **fields,
    )


def _mirrored(annotation: Any) -> Any:
    """ANNOTATION with every result class in it replaced by its json_model."""
    if isinstance(annotation, type) and issubclass(annotation, Result):
        return json_model(annotation)
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is None or origin is typing.Literal or not arguments:
        return annotation
    mirrored = tuple(_mirrored(argument) for argument in arguments)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[mirrored]  # noqa: UP007 (built from a tuple)
    return origin[mirrored]


def json_text(result: Result) -> str:
    """RESULT as one JSON document, indented by 2."""
    return json_model(type(result)).model_validate(result).model_dump_json(indent=2)


def json_list_schema(cls: type[Result]) -> dict[str, Any]:
    """The JSON Schema of a list of CLS results."""
    from pydantic import TypeAdapter

    return TypeAdapter(list[json_model(cls)]).json_schema()  # type: ignore[misc,arg-type]


def json_data(result: Result) -> Any:
    """RESULT as JSON-ready data (dicts, lists, numbers, strings)."""
    return json_model(type(result)).model_validate(result).model_dump(mode="json")


class DefaultUsed(Result):
    """A field the config left out, and the value transformers' configuration class gives it."""

    field: str
    value: int | float | str | bool | list[int] | list[str] | list[list[int]] | dict[str, int] | None
    rule: str | None = None  # how a derived default is computed, e.g. "hidden_size // num_attention_heads"


class ModelInfo(Result):
    """Who the model is: its name, where its config came from, its family, and every assumption made."""

    model: str = ""
    source: str = ""  # "bundled", "preset", "file" or "hub"
    model_type: str = ""
    architecture: str = ""  # the family, as people name it, e.g. "Llama"
    model_class: str | None = None  # the transformers class counted, e.g. "LlamaForCausalLM"
    counted_as: str | None = None  # --as: the family whose rules were applied to another model_type
    overrides: list[str] = []  # --set: the fields changed from the config as read, as KEY=VALUE (VALUE in JSON)
    defaults_used: list[DefaultUsed] = []
    notes: list[str] = []
    warnings: list[str] = []  # the model transformers builds from this config cannot work as one


Report = TypeVar("Report", bound=ModelInfo)


class Remarks:
    """What a command says about its answer beyond what loading the model said: the notes and warnings it gathers
    as it works (a context past the model's limit, a scheme not read, a model that does not fit), given to the
    finished report in one place (results are frozen)."""

    def __init__(self, notes: list[str] | None = None, warnings: list[str] | None = None) -> None:
        self.notes: list[str] = notes if notes is not None else []
        self.warnings: list[str] = warnings if warnings is not None else []

    def about(self, report: Report) -> Report:
        """REPORT with these remarks after its own."""
        if not (self.notes or self.warnings):
            return report
        return replace(report, notes=[*report.notes, *self.notes], warnings=[*report.warnings, *self.warnings])
