"""The border guard: pydantic types for the raw fields of a Hugging Face config.json.

Family adapters (``ffncalc.families``) declare their fields with these types, and with the
defaults of the family's transformers configuration class: a key a config leaves out takes
that default, and ``defaults_used`` says so. Integers are strict: JSON ``true`` and ``"4096"``
are not sizes (pydantic's default mode would read them as 1 and 4096), and every size has a
ceiling far above any published model, so a 10^30 or a negative width is rejected with the
field's name instead of being counted. Unknown keys are ignored: configs carry dozens of
fields that do not change the count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cached_property, wraps
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import InvalidConfigError
from .results import DefaultUsed
from .spec import ModelNames, ModelSpec, Names
from .units import MAX_WIDTH
from .values import Value, replace

if TYPE_CHECKING:
    from .quantization import Block

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

# Ceilings: generous (16× the largest published value or more), so only nonsense trips them.
MAX_LAYERS = 1 << 14  # 16,384 layers
MAX_HEADS = 1 << 16
MAX_EXPERTS = 1 << 16
MAX_POSITIONS = 1 << 26  # learned position tables (GPT-2's n_positions)

Width = Annotated[int, Field(strict=True, ge=1, le=MAX_WIDTH)]
WidthOrZero = Annotated[int, Field(strict=True, ge=0, le=MAX_WIDTH)]
LayerCount = Annotated[int, Field(strict=True, ge=1, le=MAX_LAYERS)]
LayerIndex = Annotated[int, Field(strict=True, ge=0, le=MAX_LAYERS)]
HeadCount = Annotated[int, Field(strict=True, ge=1, le=MAX_HEADS)]
ExpertCount = Annotated[int, Field(strict=True, ge=1, le=MAX_EXPERTS)]
ExpertCountOrZero = Annotated[int, Field(strict=True, ge=0, le=MAX_EXPERTS)]
PositionCount = Annotated[int, Field(strict=True, ge=1, le=MAX_POSITIONS)]
Flag = Annotated[bool, Field(strict=True)]
Name = Annotated[str, Field(strict=True, max_length=200)]

# Fields every config may carry that say nothing about the architecture's size.
METADATA_FIELDS = frozenset(
    {
        "model_type",
        "architectures",
        "torch_dtype",
        "dtype",
        "quantization_config",
        "mlx_quantization",
        "transformers_version",
    }
)


# transformers 5.24's activations.ACT2FN: a model whose activation is not one of them fails to build.
ACTIVATIONS = frozenset(
    {
        "gelu", "gelu_10", "gelu_accurate", "gelu_fast", "gelu_new", "gelu_python", "gelu_python_tanh",
        "gelu_pytorch_tanh", "hardswish", "laplace", "leaky_relu", "linear", "mish", "prelu", "quick_gelu", "relu",
        "relu2", "relu6", "sigmoid", "silu", "sqrtsoftplus", "swish", "tanh", "xielu",
    }
)  # fmt: skip

# configuration_utils._LEGACY_LAYER_TYPE_REMAP (transformers 5.24)
LEGACY_LAYER_TYPES = {
    "mamba": "linear_attention",
    "attention": "full_attention",
    "deepseek_sparse_attention": "indexed_attention",
    "qwen_sparse_attention": "indexed_attention",
}


def per_config(method: Callable[[Any], T]) -> Callable[[Any], T]:
    """A no-argument method of a (frozen) config, computed once per config: a layer pattern (which layers are
    sparse, which share an indexer) is read once per layer, and rebuilding it each time made 16,384 layers
    quadratic (26 s for Llama 4). The cached value is shared: callers must not change it."""
    key = f"_per_config_{method.__qualname__}"

    @wraps(method)
    def cached(self: Any) -> T:
        found = self.__dict__.get(key, _MISSING)
        if found is _MISSING:
            found = self.__dict__[key] = method(self)
        return found

    return cached


_MISSING = object()
_KEYWORDS = object()  # separates a call's keyword arguments from its positional ones in per_arguments' key


_LAYER_TYPE_FIELDS = frozenset({"layer_types", "mtp_layer_types", "layers_block_type", "mtp_layers_block_type"})
_layer_type_keys_of: dict[type, frozenset[str]] = {}


def _layer_type_keys(cls: type[BaseModel]) -> frozenset[str]:
    """The keys a config class reads layer types from (each field's name and aliases), found once per class."""
    found = _layer_type_keys_of.get(cls)
    if found is None:
        keys: set[str] = set()
        for name, field in cls.model_fields.items():
            names = {name, *getattr(field.validation_alias, "choices", ())}
            if names & _LAYER_TYPE_FIELDS:
                keys |= names
        found = _layer_type_keys_of[cls] = frozenset(keys)
    return found


def per_arguments(builder: Callable[..., T]) -> Callable[..., T]:
    """A block builder of a (frozen) config, run once per config and arguments: equal calls give the same block
    object, so identical layers built one index at a time are one object, which accounting groups without
    walking it (a sweep counts thousands of configs). Blocks are immutable values, so sharing them is safe."""
    key = f"_per_arguments_{builder.__qualname__}"

    @wraps(builder)
    def cached(self: Any, *args: Any, **kwargs: Any) -> T:
        built = self.__dict__.get(key)
        if built is None:
            built = self.__dict__[key] = {}
        call = (args, _KEYWORDS, tuple(kwargs.items())) if kwargs else args
        try:
            found = built.get(call, _MISSING)
        except TypeError:  # an unhashable argument (a list): build it every time
            return builder(self, *args, **kwargs)
        if found is _MISSING:
            found = built[call] = builder(self, *args, **kwargs)
        return found

    return cached


class DerivedDefault(Value):
    """How transformers derives a field a config leaves None: the rule as users read it, and the attribute (a
    property, or a method taking no argument) of the adapter that computes the value."""

    field: str
    rule: str
    attribute: str
    is_method: bool
    when: Any = None  # the field's value that asks for the derivation (None, or a sentinel such as "auto")


def derives(field: str, rule: str, when: Any = None) -> Callable[[F], F]:
    """Mark a method, or a property's getter, as how transformers derives FIELD when a config leaves it WHEN (None,
    or a sentinel such as "auto"); RULE says how, as users read it. The one statement of a derived default:
    ``defaults_used``, ``sets``' notes and ``resolved`` all read it."""

    def mark(function: F) -> F:
        setattr(function, _DERIVES, (field, rule, when))
        return function

    return mark


_DERIVES = "_ffncalc_derives"
_DERIVATIONS: dict[type, dict[str, DerivedDefault]] = {}


def _derivations_of(cls: type) -> dict[str, DerivedDefault]:
    """field → DerivedDefault for every method or property marked with ``derives`` on CLS or its bases (the nearest
    class's mark wins; an override of a marked attribute keeps its mark's field and rule)."""
    found = _DERIVATIONS.get(cls)
    if found is None:
        found = {}
        for klass in reversed(cls.__mro__):
            for name, value in list(vars(klass).items()):
                if isinstance(value, property):
                    getter, is_method = value.fget, False
                elif isinstance(value, cached_property):
                    getter, is_method = value.func, False
                elif callable(value) and not isinstance(value, type):
                    getter, is_method = value, True
                else:
                    continue
                mark = getattr(getter, _DERIVES, None)
                if mark is not None:
                    found[mark[0]] = DerivedDefault(mark[0], mark[1], name, is_method, mark[2])
        _DERIVATIONS[cls] = found
    return found


class Nested(BaseModel):
    """A nested block of a config (DBRX's attn_config): the same rules, no metadata."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


class HFConfig(BaseModel):
    """Fields every family shares; each family adapter subclasses it and implements ``to_spec``.

    An adapter declares exactly the fields it reads, with the defaults of ``config_class`` in
    transformers; a field whose default is derived from others is declared None, and the method or
    property computing it is marked ``@derives(field, rule)``.
    """

    # Names and ModelNames on an adapter are class data: where the family's checkpoints keep each part.
    model_config = ConfigDict(
        extra="ignore", frozen=True, populate_by_name=True, defer_build=True, ignored_types=(Names, ModelNames)
    )

    model_type: Name
    architectures: list[Name] | None = Field(None, max_length=20)
    torch_dtype: Name | None = None
    dtype: Name | None = None  # transformers ≥ 4.56 writes `dtype` instead of `torch_dtype`
    quantization_config: dict[str, Any] | None = None
    # mlx-lm's own key for its quantization (transformers reads no such key): "quantization" in config.json
    mlx_quantization: dict[str, Any] | None = Field(None, validation_alias="quantization")
    transformers_version: Name | None = None  # the version that wrote the config (and the checkpoint)

    #: A readable family name for tables.
    architecture: ClassVar[str] = ""
    #: transformers' configuration class whose defaults the adapter declares.
    config_class: ClassVar[str] = ""
    #: The model class counted when ``architectures`` names none this family knows.
    default_model_class: ClassVar[str] = ""
    #: Fields read for advice only (a context beyond max_position_embeddings), not for counting.
    informational_fields: ClassVar[frozenset[str]] = frozenset()
    #: Keys read although transformers' configuration class declares no field for them: modeling code
    #: reads them with getattr (head_dim), or __post_init__ takes them from the config's keys.
    undeclared_keys: ClassVar[frozenset[str]] = frozenset()
    #: A declared family's (``@family(..., transformers=...)``, families/declaration.py) fields read beyond its
    #: configuration class, and those whose default it takes otherwise than the record: field → why.
    read_beyond: ClassVar[dict[str, str]] = {}
    own_defaults: ClassVar[dict[str, str]] = {}
    other_names: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _remap_legacy_layer_types(cls, raw: Any) -> Any:
        """transformers renames old layer-type names in every config's layer_types and mtp_layer_types (whatever
        key its attribute_map reads them from, and Nemotron-H's mtp_layers_block_type): "mamba" is
        "linear_attention", "attention" "full_attention"."""
        if not isinstance(raw, dict):
            return raw
        remapped = dict(raw)
        for key in _layer_type_keys(cls) & raw.keys():
            value = raw[key]
            if isinstance(value, list):
                remapped[key] = [LEGACY_LAYER_TYPES.get(v, v) if isinstance(v, str) else v for v in value]
        return remapped

    @property
    def stored_dtype(self) -> str | None:
        """The dtype the checkpoint declares, whichever key it uses."""
        return self.torch_dtype or self.dtype

    #: The field holding the longest context the model was built for.
    context_field: ClassVar[str] = "max_position_embeddings"

    def max_context(self) -> int | None:
        """The longest context the config says the model handles (max_position_embeddings), if it says."""
        value = getattr(self, self.context_field, None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def written_before(self, major: int, minor: int) -> bool:
        """Whether the config says it was saved by a transformers older than major.minor."""
        match = re.match(r"(\d+)\.(\d+)", self.transformers_version or "")
        return match is not None and (int(match[1]), int(match[2])) < (major, minor)

    def family_name(self) -> str:
        """The family as people name it (a preset: its title)."""
        return self.architecture

    def model_class(self) -> str:
        """The transformers class counted: the config's ``architectures[0]``, else the family's usual one."""
        return (self.architectures or [self.default_model_class])[0] or self.default_model_class

    @classmethod
    def derivations(cls) -> dict[str, DerivedDefault]:
        """field → how transformers derives it when a config leaves it None (or the mark's sentinel), for each of
        this class's fields marked ``derives``."""
        fields = cls.model_fields
        return {field: derivation for field, derivation in _derivations_of(cls).items() if field in fields}

    @classmethod
    def derived_defaults(cls) -> dict[str, str]:
        """field → how transformers derives it, for each field this class derives by default (declared None, or the
        sentinel its ``derives`` mark names)."""
        fields = cls.model_fields
        return {
            field: derivation.rule
            for field, derivation in cls.derivations().items()
            if fields[field].default == derivation.when
        }

    def resolved(self, field: str) -> Any:
        """A field's value: the config's, or where it asks for the derivation (None), the value its ``derives`` mark
        computes."""
        value = getattr(self, field)
        derivation = _derivations_of(type(self)).get(field)
        if derivation is None or value != derivation.when:
            return value
        derived = getattr(self, derivation.attribute)
        return derived() if derivation.is_method else derived

    def unused_fields(self) -> set[str]:
        """Fields this config's other values make irrelevant (a window size while windows are off)."""
        return set()

    def superseded_fields(self) -> dict[str, str]:
        """Fields another field decides whatever they say (field → the one that decides): an override of one would
        change nothing, so `sets` refuses it and names the other."""
        return {}

    def defaults_used(self) -> list[DefaultUsed]:
        """Every architectural field the config left out, with the value transformers gives it."""
        skip = METADATA_FIELDS | self.informational_fields | self.unused_fields()
        return [DefaultUsed(field=field, value=value, rule=rule) for field, value, rule in _defaults_of(self, skip)]

    def nested_defaults(self, blocks: dict[str, HFConfig] | None = None) -> list[DefaultUsed]:
        """Each nested config's defaults (BLOCKS, else every one of nested_configs()), named under its field."""
        nested = self.nested_configs() if blocks is None else blocks
        return [
            replace(default, field=f"{field}.{default.field}")
            for field, block in nested.items()
            for default in block.defaults_used()
        ]

    #: An MoE config's (experts-per-token field, experts field).
    routing_fields: ClassVar[tuple[str, str] | None] = None

    def warnings(self) -> list[str]:
        """Where the config builds a model that cannot work as one (a zero width, more experts per token than experts)."""
        if self.routing_fields is None:
            return []
        per_token_field, experts_field = self.routing_fields
        return unroutable(getattr(self, per_token_field), getattr(self, experts_field), per_token_field, experts_field)

    def validate_nested(self) -> None:
        """Check nested configs that pydantic does not validate itself (a wrapper's text_config): reading each of
        nested_configs() validates it, or raises an error naming its field. Families with more checks extend this."""
        self.nested_configs()

    def nested_configs(self) -> dict[str, HFConfig]:
        """Field → the config a nested block is read as by its own adapter (a wrapper's text_config); none here."""
        return {}

    @cached_property
    def quantization(self) -> Block | None:
        """The quantization_config, checked by its scheme's rules (None: the checkpoint is not quantized); an mlx-lm
        checkpoint's "quantization" block where it has no quantization_config of a scheme transformers knows
        (newer mlx-lm writes the same block as quantization_config, without a quant_method)."""
        mlx = self.mlx_quantization
        if mlx is not None and (self.quantization_config is None or "quant_method" not in self.quantization_config):
            return read_quantization(mlx, "quantization", mlx=True)
        return read_quantization(self.quantization_config, "quantization_config")

    def notes(self) -> list[str]:
        """What a reader needs to know beside the numbers (quantized storage, custom code …)."""
        return []

    def to_spec(self) -> ModelSpec:  # pragma: no cover - every adapter overrides it
        raise NotImplementedError


def _defaults_of(model: BaseModel, skip: frozenset[str], prefix: str = "") -> list[tuple[str, Any, str | None]]:
    """(field, value, rule) for each field left to its default, nested blocks field by field."""
    found: list[tuple[str, Any, str | None]] = []
    for field in type(model).model_fields:
        if field in skip:
            continue
        value = getattr(model, field)
        if isinstance(value, BaseModel):
            found += _defaults_of(value, frozenset(), f"{prefix}{field}.")
        elif field not in model.model_fields_set:
            rule = model.derived_defaults().get(field) if isinstance(model, HFConfig) else None
            if rule and isinstance(model, HFConfig):
                value = model.resolved(field)
            found.append((prefix + field, list(value) if isinstance(value, tuple) else value, rule))
    return found


def read_block(adapter: type[M], data: dict[str, Any], field: str) -> M:
    """DATA (a nested block of the config, as FIELD) read by ADAPTER, its errors named under FIELD."""
    try:
        return adapter.model_validate(data)
    except ValidationError as error:
        raise describe_validation_error(error, "", prefix=field) from None


def describe_validation_error(error: ValidationError, source: str, prefix: str = "") -> InvalidConfigError:
    """One line naming each offending field: ``field: message; field: message`` (nested under PREFIX)."""
    problems = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in ((prefix,) if prefix else ()) + tuple(item["loc"]))
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "missing":
            message = "required field is missing"
        elif "input" in item and item["type"] != "value_error" and not isinstance(item["input"], (dict, list)):
            message = f"{message} (got {_short(item['input'])})"
        message = re.sub(r" or instance of \w+", "", message.replace("Input should be", "must be"))
        problems.append(f"{location}: {message}" if location else message)
    shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
    return InvalidConfigError(f"{source}: {shown}" if source else shown)


def read_quantization(raw: dict[str, Any] | None, where: str, mlx: bool = False) -> Block | None:
    """RAW (a quantization_config found at WHERE, or with MLX mlx-lm's block) validated by its scheme's rules; a
    refusal names the field."""
    if raw is None:
        return None
    from .quantization import QuantizationError, read_block, read_mlx

    try:
        return read_mlx(raw) if mlx else read_block(raw)
    except ValidationError as error:
        raise describe_validation_error(error, "", prefix=where) from None
    except QuantizationError as error:
        location = f"{where}.{error.field}" if error.field else where
        raise InvalidConfigError(f"{location}: {error.message}") from None


def _short(value: Any) -> str:
    try:
        text = json.dumps(value)  # show values as they look in config.json: true, "64", 1e+30, NaN
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def ungroupable(heads: int, kv_heads: int, heads_field: str, kv_field: str) -> list[str]:
    """The warning for query heads that do not group over the KV heads (fewer of them than KV heads, or not a
    multiple): transformers builds the projections, and its attention then fails; ffncalc counts the projections."""
    if not kv_heads or heads % kv_heads == 0:
        return []
    return [
        f"{heads_field} ({heads}) is not a multiple of {kv_field} ({kv_heads}): transformers builds the "
        "projections, but attention cannot group the heads"
    ]


def unroutable(per_token: int | None, experts: int | None, per_token_field: str, experts_field: str) -> list[str]:
    """The warning for more experts per token than experts. transformers builds such a model (its top-k then fails
    on the first token); ffncalc counts it, with every expert active (families' MoE builder caps the count)."""
    if per_token is None or not experts or per_token <= experts:
        return []
    return [
        f"{per_token_field} ({per_token}) exceeds {experts_field} ({experts}): transformers builds the model, "
        "but cannot route a token; active parameters count every expert"
    ]
