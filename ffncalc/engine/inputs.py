"""What every engine reads from its options before counting: the model as loaded, the context (capped at the
model's own limit, with what to say about it), the dtypes the weights and the KV cache are counted in, and an
accelerator's memory given as a size or a name."""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..loading import LoadedModel, load_config
from ..results import Remarks
from ..units import parse_context, safetensors_dtype
from ..values import Value

if TYPE_CHECKING:
    from ..storage import Scheme


# What each quantized --dtype lays every linear weight out as (memory.WHAT_IF's schemes, said in words).
WHAT_IF_LAYOUTS = {
    "fp8": "FP8 E4M3 weights with a float32 scale per 128 × 128 block (as DeepSeek and Qwen publish)",
    "int8": "bitsandbytes LLM.int8: int8 weights with a float32 scale per output row",
    "int4": "GPTQ layout: 4-bit weights packed in int32, a float16 scale and a 4-bit zero point (packed in int32) "
    "per group of {group} inputs, and an int32 g_idx per input",
    "nf4": "bitsandbytes NF4: two 4-bit values a byte, a float32 absmax per block of 64",
    "mxfp4": "MXFP4: two 4-bit values a byte, one E8M0 scale per 32 values",
}


def cache_element_type(dtype: str, option: str) -> str:
    """The safetensors dtype a KV cache is held in; a cache holds floats (bool, integers and E8M0 scales refused)."""
    from ..footprint import CACHE_DTYPES

    name = safetensors_dtype(dtype)
    if name not in CACHE_DTYPES:
        raise UsageError(
            f"{option} {dtype!r} is not a type a KV cache holds; use a float type: bf16, fp16, fp32, fp8 (E4M3) "
            "or float8_e5m2"
        )
    return name


class StoredAs(Value):
    """How a command takes the weights and the cache: the dtype of what is not quantized, the quantization scheme,
    the KV cache's element type, and what to say about the choice."""

    dtype: str
    scheme: Scheme | None
    cache_dtype: str
    notes: tuple[str, ...]
    # the `dtype` an engine's dtype="auto" loads a float32 checkpoint as ("bf16" or "fp16"); None: as stored or asked
    served_as: str | None = None


QUANT_GROUP_SIZES = (16, 32, 64, 128, 256, 512, 1024)  # `quant_group_size`: the groups GPTQ and gpt-fast pack


def check_quantization(dtype: str | None, group_size: int | None, quantize_head: bool) -> None:
    """`quant_group_size` and `quantize_head` reshape the quantized what-if of `dtype` (WHAT_IF), or a UsageError
    naming the field: a group size for `dtype` int4 alone, a quantized head for a quantized `dtype`."""
    key = dtype.lower() if dtype is not None else None
    if group_size is not None:
        if key != "int4":
            raise UsageError("`quant_group_size` sets the groups of `dtype` int4 (GPTQ's layout); add `dtype` int4")
        if group_size not in QUANT_GROUP_SIZES:
            sizes = ", ".join(map(str, QUANT_GROUP_SIZES))
            raise UsageError(f"`quant_group_size` must be one of {sizes}, e.g. 32 (got {group_size})")
    if quantize_head and key not in WHAT_IF_LAYOUTS:
        raise UsageError(
            f"`quantize_head` quantizes the output head as a quantized `dtype` does the other linear weights; add "
            f"`dtype` {', '.join(WHAT_IF_LAYOUTS)}"
        )


def stored_as(
    loaded: LoadedModel,
    dtype: str | None,
    kv_dtype: str | None,
    group_size: int | None = None,
    quantize_head: bool = False,
    engine: str | None = None,
) -> StoredAs:
    """The weights as the checkpoint stores them (the config's dtype and quantization_config), or as DTYPE asks
    (WHAT_IF: int4 in groups of GROUP_SIZE inputs, default 128; the output head too with QUANTIZE_HEAD); the cache
    in KV_DTYPE, else the weights' float type (BF16 for quantized weights). ENGINE (a serving engine's name, as
    serving.parse_engine reads it): a checkpoint taken as stored is taken as that engine loads it
    (serving.engine_dtype: float32 in 16 bits)."""
    from ..footprint import WHAT_IF
    from ..storage import parse_scheme
    from ..values import replace

    notes: list[str] = []
    check_quantization(dtype, group_size, quantize_head)
    cache_dtype = cache_element_type(kv_dtype, "`kv_dtype`") if kv_dtype else None
    served_as = None
    if dtype is None and engine is not None:
        from ..serving import engine_dtype, parse_engine

        version = parse_engine(engine)
        stored = loaded.config.stored_dtype
        checkpoint = safetensors_dtype(stored) if stored else "BF16"
        encoder_only = not any(layer.stack == "decoder" for layer in loaded.spec.layers)
        served = engine_dtype(version, checkpoint, encoder_only)
        if served != checkpoint:
            notes.append(
                f"{version.engine} serves this {checkpoint} checkpoint in {served} (its dtype='auto' downcasts "
                f"float32 weights): weights and KV cache are counted in {served} (`dtype` to choose)."
            )
            dtype = served_as = {"BF16": "bf16", "F16": "fp16"}[served]
    if dtype is not None:
        key = dtype.lower()
        if key not in WHAT_IF:
            raise UsageError(f"`dtype` {dtype!r}: use one of {', '.join(WHAT_IF)}")
        weight_dtype, scheme = WHAT_IF[key]
        if scheme is not None and group_size is not None:
            scheme = replace(scheme, group_size=group_size)
        if scheme is not None and quantize_head:
            scheme = replace(scheme, head=True)
        if key in WHAT_IF_LAYOUTS:
            layout = WHAT_IF_LAYOUTS[key].format(group=scheme.group_size if scheme else None)
            if not quantize_head:
                rest = "embeddings, norms and the output head stay in BF16"
            elif loaded.spec.tie_word_embeddings:
                rest = "the output head is tied to the embedding table, which stays in BF16 with the norms"
            else:
                rest = "the output head quantized so too; embeddings and norms stay in BF16"
            notes.append(f"`dtype` {key}: {layout}; {rest}.")
    else:
        stored = loaded.config.stored_dtype
        weight_dtype = safetensors_dtype(stored) if stored else "BF16"
        if stored is None:
            notes.append(
                "The config names no dtype: weights assumed stored in bfloat16, as most checkpoints are (`dtype` to choose)."
            )
        scheme = parse_scheme(loaded.config.quantization)
    floats = weight_dtype if weight_dtype in ("F32", "F16", "BF16") else "BF16"
    return StoredAs(weight_dtype, scheme, cache_dtype or floats, tuple(notes), served_as=served_as)


def loaded_model(model: str | LoadedModel) -> LoadedModel:
    """MODEL as loaded: a LoadedModel as it is, a name loaded as it stands (load_config for a revision, `as_type` or `sets`)."""
    if isinstance(model, LoadedModel):
        return model
    if not isinstance(model, str):
        raise UsageError(f"`model` must be a name, a path or a LoadedModel (got {repr(model)[:40]})")
    from ..gguf_models import open_gguf
    from ..source import is_gguf

    return open_gguf(model) if is_gguf(model) else load_config(model)


DEFAULT_CONTEXT = 8192  # flops and memory without --ctx; capped at the model's own limit
DEFAULT_CROSSOVER_CONTEXT = 128 * 1024  # crossover without --ctx: contexts from 1k doubling up to 128k


def context_of(context: int | str | None, loaded: LoadedModel, remarks: Remarks) -> int:
    """The context to count at, with what to say about it in REMARKS.

    Without a context: DEFAULT_CONTEXT, or the config's longest context if that is shorter (a note says
    so). A context the user chose beyond that limit is counted anyway, with a warning.
    """
    limit, field = loaded.config.max_context(), loaded.config.context_field
    if context is None:
        if limit is not None and limit < DEFAULT_CONTEXT:
            remarks.notes.append(f"context: {limit:,} tokens, this config's {field} (`context` to choose another)")
            return limit
        return DEFAULT_CONTEXT
    tokens = parse_context(context)
    if limit is not None and tokens > limit:
        remarks.warnings.append(
            f"context {tokens:,} exceeds this config's {field} ({limit:,}); the figures are computed anyway"
        )
    return tokens


def check_types(options: Value) -> None:
    """Each field of OPTIONS holds a value of its annotated type, or a UsageError names the field: a library caller's
    `batch="8"` or `dtype=4` is told so, not answered with an AttributeError from deep in the arithmetic. (The CLI's
    options arrive typed; this is the library's door.) Not pydantic's validation: in its default lax mode it would
    take "8" for 8, and the options are plain Value classes; the annotations here are builtins, unions, tuples and
    Literals only, which _matches covers."""
    hints = _hints(f"{type(options).__module__}.{type(options).__qualname__}", type(options))
    for name in options._fields:
        value = getattr(options, name)
        if not _matches(value, hints[name]):
            raise UsageError(f"`{name}` must be {_describe(hints[name])} (got {repr(value)[:40]})")


_HINTS: dict[str, dict[str, Any]] = {}


def _hints(name: str, cls: Any) -> dict[str, Any]:
    """The class's field annotations, resolved once a class."""
    if name not in _HINTS:
        _HINTS[name] = typing.get_type_hints(cls)
    return _HINTS[name]


def check_arguments(function: Callable[..., Any], namespace: Callable[[], dict[str, Any]]) -> Callable[..., Any]:
    """FUNCTION whose arguments are each checked against its annotations when it is called, as check_types checks an
    options value: a wrong type is a UsageError naming the parameter. NAMESPACE gives the names its annotations use
    that its module imports only for type checking (asked on the first call, so importing costs nothing)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        key = f"{function.__module__}.{function.__qualname__}"
        hints = _HINTS.get(key)
        if hints is None:
            hints = _HINTS[key] = _parameter_hints(function, signature, namespace())
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            if hint is not None and not _matches(value, hint):
                raise UsageError(f"`{name}` must be {_describe(hint)} (got {repr(value)[:40]})")
        return function(*args, **kwargs)

    return checked


def _parameter_hints(
    function: Callable[..., Any], signature: inspect.Signature, names: dict[str, Any]
) -> dict[str, Any]:
    """FUNCTION's parameter annotations, evaluated (this package's own source) with NAMES beside its module's; one
    that names what neither holds is left unchecked."""
    hints = {}
    for name, parameter in signature.parameters.items():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, function.__globals__, names)  # this package's own annotations
            except NameError:
                continue
        hints[name] = annotation
    return hints


def _matches(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return isinstance(value, tuple) and all(_matches(part, item) for part in value)
    if origin in (list, collections.abc.Iterable):
        item = typing.get_args(hint)[0] if typing.get_args(hint) else Any
        return isinstance(value, origin) and not isinstance(value, str) and all(_matches(part, item) for part in value)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    return isinstance(value, origin or hint)


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        arms = [arm for arm in typing.get_args(hint) if arm is not type(None)]
        words = " or ".join(_describe(arm) for arm in arms)
        return words + (" or None" if len(arms) < len(typing.get_args(hint)) else "")
    if origin is tuple:
        return f"a tuple of {_describe(typing.get_args(hint)[0])}s"
    if origin in (list, collections.abc.Iterable):
        return f"a list of {_describe(typing.get_args(hint)[0])}s"
    if origin is typing.Literal:
        return " or ".join(repr(choice) for choice in typing.get_args(hint))
    return TYPE_WORDS.get(hint, getattr(hint, "__name__", str(hint)))


TYPE_WORDS = {bool: "True or False", int: "a whole number", float: "a number", str: "text"}


def engine_door(function: Callable[..., Any]) -> Callable[..., Any]:
    """An engine's function (memory, speed, train) whose arguments are checked against its annotations."""
    return check_arguments(function, dict)
