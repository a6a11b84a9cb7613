"""The library's front door: name a model, get its spec and its accounting."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError
from .results import ModelInfo, Result
from .source import RawConfig, bundled_models, load_raw_config, presets
from .units import bytes_per_element, parse_context, safetensors_dtype
from .values import Value

# The engine's modules are imported by the functions that use them: a command should not pay for
# creating the classes of every other command (derive-dim --dim reads no config at all).
if TYPE_CHECKING:
    from .accounting import ParamsReport
    from .comparison import CompareRow
    from .compute import CrossoverReport, FlopsReport, Measure, MlaForm
    from .ffn_width import DeriveDimReport
    from .memory import MemoryReport
    from .schema import HFConfig
    from .spec import ModelSpec
    from .verification import VerifyReport


class LoadedModel(Value):
    """A model's validated config and spec, with the name and source it was loaded under."""

    name: str
    source: str  # "bundled", "preset", "file" or "hub"
    config: HFConfig
    spec: ModelSpec
    info: ModelInfo


CUSTOM_CODE_NOTE = "The repo declares custom code (auto_map); ffncalc read the config as data and ran none of it."


def load_config(
    model: str, revision: str | None = None, token: str | None = None, as_type: str | None = None
) -> LoadedModel:
    """Find MODEL's config.json (path, folder, bundled config or Hub id) and turn it into a spec.

    AS_TYPE counts a config with another family's rules (forks, renamed custom code); the info says so.
    """
    return _loaded(load_raw_config(model, revision=revision, token=token), as_type)


def _loaded(raw: RawConfig, as_type: str | None = None) -> LoadedModel:
    """A config.json read from its source, validated and turned into a spec."""
    from .families import parse_config
    from .quantization import notes as quantization_notes
    from .quantization import warnings as quantization_warnings

    config = parse_config(raw.data, raw.name, as_type=as_type)
    notes = list(config.notes()) + quantization_notes(config.quantization) + unread_quantization(raw.data)
    if "auto_map" in raw.data:
        notes.append(CUSTOM_CODE_NOTE)
    counted_as = None
    if as_type and as_type != raw.data.get("model_type"):
        counted_as = as_type
        notes.insert(0, f"model_type {raw.data.get('model_type')!r} counted with the rules of {as_type!r} (--as).")
    info = ModelInfo(
        model=raw.name,
        source=raw.source,
        model_type=str(raw.data.get("model_type")),
        architecture=config.family_name(),
        model_class=config.model_class() or None,
        counted_as=counted_as,
        defaults_used=config.defaults_used(),
        notes=notes,
        warnings=config.warnings() + quantization_warnings(config.quantization),
    )
    return LoadedModel(name=raw.name, source=raw.source, config=config, spec=config.to_spec(), info=info)


# What each quantized --dtype lays every linear weight out as (memory.WHAT_IF's schemes, said in words).
WHAT_IF_LAYOUTS = {
    "fp8": "FP8 E4M3 weights with a float32 scale per 128 × 128 block (as DeepSeek and Qwen publish)",
    "int8": "bitsandbytes LLM.int8: int8 weights with a float32 scale per output row",
    "int4": "GPTQ layout: 4-bit weights packed in int32, a float16 scale and a packed zero point per group of 128 "
    "inputs, and g_idx",
    "nf4": "bitsandbytes NF4: two 4-bit values a byte, a float32 absmax per block of 64",
    "mxfp4": "MXFP4: two 4-bit values a byte, one E8M0 scale per 32 values",
}


def cache_element_type(dtype: str, option: str) -> str:
    """The safetensors dtype a KV cache is held in; a cache holds floats (bool, integers and E8M0 scales refused)."""
    from .memory import CACHE_DTYPES

    name = safetensors_dtype(dtype)
    if name not in CACHE_DTYPES:
        raise UsageError(
            f"{option} {dtype!r} is not a type a KV cache holds; use a float type: bf16, fp16, fp32, fp8 (E4M3) "
            "or float8_e5m2"
        )
    return name


def unread_quantization(data: dict[str, object]) -> list[str]:
    """MLX's own "quantization" key (mlx-lm writes it; transformers reads no such key): said, not read."""
    block = data.get("quantization")
    if not isinstance(block, dict) or data.get("quantization_config") is not None:
        return []
    described = ", ".join(f"{key} {block[key]}" for key in ("bits", "group_size") if key in block)
    return [
        f"The config's \"quantization\" block ({described or 'MLX'}) is MLX's, which transformers does not read; "
        "ffncalc does not read it either: weights are counted unquantized, in the config's dtype"
    ]


def account(
    model: str | LoadedModel, revision: str | None = None, token: str | None = None, as_type: str | None = None
) -> ParamsReport:
    """Every parameter of MODEL, by component and by layer."""
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision, token, as_type)
    from .accounting import count_params

    report = count_params(loaded.spec, loaded.info)
    published = getattr(loaded.config, "published_params", None)
    if published:
        source = getattr(loaded.config, "published_source", None) or None
        report = report.model_copy(update={"published_params": published, "published_source": source})
    return report


def flops(
    model: str | LoadedModel,
    context: int | str | None = None,
    mla_form: MlaForm = "plain",
    causal: bool = True,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
    image: str | None = None,
) -> FlopsReport:
    """FLOPs per token at CONTEXT (e.g. 8192 or "8k"; default DEFAULT_CONTEXT), prefill of that many tokens, and
    training; with IMAGE ("1024x768"), what one image costs the vision tower and projector."""
    from .compute import count_flops
    from .images import count_image_flops, parse_image_size

    if context is not None:
        parse_context(context)  # a bad --ctx or --image is refused before any download
    size = parse_image_size(image) if image is not None else None
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision, token, as_type)
    tokens, info = _context(context, loaded)
    report = count_flops(loaded.spec, tokens, info, mla_form=mla_form, causal=causal)
    if size is not None:
        report = report.model_copy(update={"image": count_image_flops(loaded.spec, info.model, *size)})
    return report


def crossover(
    model: str | LoadedModel,
    max_context: int | str = "128k",
    measure: Measure = "flops",
    mla_form: MlaForm = "plain",
    dtype: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
) -> CrossoverReport:
    """Where attention's context-dependent cost (FLOPs or KV-cache bytes) overtakes the FFN's."""
    from .compute import count_crossover

    tokens = parse_context(max_context)
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision, token, as_type)
    element_bytes = None
    if measure == "bytes":
        option = "--dtype" if dtype else "the config's torch_dtype"
        dtype = dtype or loaded.config.stored_dtype
        element_bytes = bytes_per_element(dtype)
        cache_element_type(dtype or "", option)
    report = count_crossover(
        loaded.spec,
        tokens,
        loaded.info,
        measure=measure,
        mla_form=mla_form,
        dtype=dtype,
        bytes_per_element=element_bytes,
    )
    return _with_crossover_note(report, loaded)


def derive_dim(
    dim: int | None = None,
    multiplier: float | None = None,
    multiple_of: int = 256,  # dims.REFERENCE_MULTIPLE_OF, the reference code's default
    target: int | None = None,
    model: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
) -> DeriveDimReport:
    """Meta's FFN width rule forwards (dim, multiplier, multiple_of) and/or backwards (which settings give target).

    With MODEL, dim and target are the config's hidden_size and FFN width.
    """
    from .ffn_width import (
        DeriveDimReport,
        degenerate,
        derivation_notes,
        derive_intermediate_size,
        model_ffn,
        not_a_gated_ffn,
        solve_intermediate_size,
    )

    name = None
    if model is not None:
        if dim is not None or target is not None:
            raise UsageError("give either --model or --dim/--target, not both")
        loaded = load_config(model, revision, token, as_type)
        ffn = model_ffn(loaded.spec)
        if ffn is None or not ffn.gated:
            return DeriveDimReport(
                model=loaded.name, derivation=None, solve=None, notes=[not_a_gated_ffn(loaded.name, ffn)]
            )
        name, dim, target = loaded.name, ffn.hidden_size, ffn.intermediate_size
    if dim is None:
        raise UsageError("give --dim (with --mult, --multiple-of or --target) or --model")
    forwards = target is None or multiplier is not None
    derivation = derive_intermediate_size(dim, multiplier, multiple_of) if forwards else None
    solve = solve_intermediate_size(dim, target) if target is not None else None
    return DeriveDimReport(
        model=name,
        derivation=derivation,
        solve=solve,
        notes=derivation_notes(derivation, solve),
        warnings=degenerate(derivation),
    )


def compare(
    models: list[str] | None = None,
    sort: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    live: bool = False,
) -> list[CompareRow]:
    """FFN width, ratio, gating and parameter shares of MODELS (default: the reference table), one row per FFN kind.

    Bundled configs and presets are read from the catalog while it is current; LIVE counts them anyway."""
    from . import catalog
    from .comparison import COLUMNS, DEFAULT_MODELS, CompareRow, compare_rows, sort_rows

    if sort and sort.lstrip("-") not in COLUMNS:
        raise UsageError(f"cannot sort by {sort!r}; columns: {', '.join(COLUMNS)} (prefix - to sort descending)")
    rows = []
    for model in models or DEFAULT_MODELS:
        raw = load_raw_config(model, revision=revision, token=token)
        entry = (
            None if live or raw.source not in ("bundled", "preset") else catalog.counted(raw.name, Path(raw.location))
        )
        if entry is not None:
            rows += [CompareRow(**row) for row in entry["compare"]]
        else:
            loaded = _loaded(raw)
            rows += compare_rows(loaded.name, loaded.spec, account(loaded))
    return sort_rows(rows, sort)


def verify(
    model: str, revision: str | None = None, token: str | None = None, as_type: str | None = None
) -> VerifyReport:
    """MODEL's count against its checkpoint's safetensors headers (local folder or Hub), differences explained."""
    from .checkpoint import load_checkpoint
    from .storage import parse_scheme
    from .verification import verify_checkpoint

    loaded = load_config(model, revision, token, as_type)
    checkpoint = load_checkpoint(model, revision=revision, token=token)
    dtype = loaded.config.stored_dtype
    scheme = parse_scheme(loaded.config.quantization)
    stored_dtype = safetensors_dtype(dtype) if dtype else None
    return verify_checkpoint(loaded.spec, account(loaded), checkpoint, stored_dtype, scheme)


class BundledModel(Result):
    """One bundled config or preset with its totals, as `ffncalc models` lists it."""

    model: str
    source: str  # "bundled" (a real config.json) or "preset" (ffncalc's format, from a paper)
    architecture: str
    model_type: str
    total_params: int
    active_params: int | None
    active_params_without_embedding: int | None  # what model cards quote as "active"


def list_families(live: bool = False) -> dict[str, list[str]]:
    """Every supported family, as people name it, with the model_types it reads (from the catalog while it is
    current, unless LIVE)."""
    from . import catalog
    from .families import families

    listed = None if live else catalog.families()
    return listed if listed is not None else families()


def list_bundled(live: bool = False) -> list[BundledModel]:
    """Every bundled config and preset, counted (read from the catalog while it is current, unless LIVE)."""
    from . import catalog

    rows = []
    for name, path in [*bundled_models().items(), *presets().items()]:
        entry = None if live else catalog.counted(name, path)
        if entry is not None:
            rows.append(BundledModel(**entry["model"]))
            continue
        report = account(name)
        rows.append(
            BundledModel(
                model=name,
                source=report.source,
                architecture=report.architecture,
                model_type=report.model_type,
                total_params=report.total_params,
                active_params=report.active_params,
                active_params_without_embedding=report.active_params_without_embedding,
            )
        )
    return rows


def memory(
    model: str | LoadedModel,
    context: int | str | None = None,
    batch: int = 1,
    dtype: str | None = None,
    kv_dtype: str | None = None,
    train: bool = False,
    optimizer: str = "adamw",
    recompute: str = "none",
    zero_stage: int = 0,
    gpus: int = 1,
    gpu_memory: str | None = None,
    chunk: int = 2048,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
) -> MemoryReport:
    """Will MODEL fit: weights (as stored, or as DTYPE), KV cache at CONTEXT × BATCH, activations, training."""
    from .memory import ACCELERATORS, WHAT_IF, count_memory

    if kv_dtype is not None:
        cache_element_type(kv_dtype, "--kv-dtype")  # refused before any download
    from .storage import parse_scheme
    from .units import parse_size

    if context is not None:
        parse_context(context)  # a bad --ctx is refused before any download
    for name, value, low in (("--batch", batch, 1), ("--gpus", gpus, 1), ("--chunk", chunk, 1)):
        if not isinstance(value, int) or value < low or value > 1 << 20:
            raise UsageError(f"{name} must be a whole number from {low} to {1 << 20:,} (got {value})")
    if zero_stage not in (0, 1, 2, 3):
        raise UsageError(f"--zero must be 0, 1, 2 or 3 (got {zero_stage})")
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision, token, as_type)
    tokens, info = _context(context, loaded)
    notes = list(info.notes)
    if dtype is not None:
        key = dtype.lower()
        if key not in WHAT_IF:
            raise UsageError(f"--dtype {dtype!r}: use one of {', '.join(WHAT_IF)}")
        weight_dtype, scheme = WHAT_IF[key]
        if key in WHAT_IF_LAYOUTS:
            notes.append(f"--dtype {key}: {WHAT_IF_LAYOUTS[key]}; embeddings, norms and the head stay in BF16.")
    else:
        stored = loaded.config.stored_dtype
        weight_dtype = safetensors_dtype(stored) if stored else "BF16"
        if stored is None:
            notes.append(
                "The config names no dtype: weights assumed stored in bfloat16, as most checkpoints are (--dtype to choose)."
            )
        scheme = parse_scheme(loaded.config.quantization)
    cache_dtype = (
        cache_element_type(kv_dtype, "--kv-dtype")
        if kv_dtype
        else (weight_dtype if weight_dtype in ("F32", "F16", "BF16") else "BF16")
    )
    if train and scheme is not None:
        notes.append(
            f"--train with {scheme.method} weights: the training figures are full training in 16-bit mixed precision "
            "(2 bytes a weight and a gradient, the optimizer's float32 states); a quantized model is trained only as "
            "a frozen base with adapters (QLoRA-style), which these figures do not count."
        )
    accelerators = dict(ACCELERATORS)
    if gpu_memory is not None:
        accelerators = {f"your GPU ({gpu_memory})": parse_size(gpu_memory)} | accelerators
    report = count_memory(
        loaded.spec,
        info.model_copy(update={"notes": notes}),
        weight_dtype=weight_dtype,
        scheme=scheme,
        context=tokens,
        batch=batch,
        kv_dtype=cache_dtype,
        chunk=chunk,
        gpus=gpus,
        accelerators=accelerators,
        train=train,
        optimizer=optimizer,  # type: ignore[arg-type]
        recompute=recompute,  # type: ignore[arg-type]
        zero_stage=zero_stage,
        parameters=account(loaded).total_params,
    )
    return report


def _with_crossover_note(report: CrossoverReport, loaded: LoadedModel) -> CrossoverReport:
    """A crossover past the config's max_position_embeddings is reached by no input the model was built for."""
    limit, point = loaded.config.max_context(), report.crossover_context_ceil
    if limit is not None and point is not None and point > limit:
        note = f"the crossover ({point:,} tokens) lies beyond this config's {loaded.config.context_field} ({limit:,})"
        return report.model_copy(update={"notes": [*report.notes, note]})
    return report


DEFAULT_CONTEXT = 8192  # flops and memory without --ctx; capped at the model's own limit


def _context(context: int | str | None, loaded: LoadedModel) -> tuple[int, ModelInfo]:
    """The context to count at, and the model's info with what to say about it.

    Without a context: DEFAULT_CONTEXT, or the config's longest context if that is shorter (a note says
    so). A context the user chose beyond that limit is counted anyway, with a warning.
    """
    limit, info, field = loaded.config.max_context(), loaded.info, loaded.config.context_field
    if context is None:
        if limit is not None and limit < DEFAULT_CONTEXT:
            note = f"context: {limit:,} tokens, this config's {field} (--ctx to choose another)"
            return limit, info.model_copy(update={"notes": [*info.notes, note]})
        return DEFAULT_CONTEXT, info
    tokens = parse_context(context)
    if limit is not None and tokens > limit:
        warning = f"context {tokens:,} exceeds this config's {field} ({limit:,}); the figures are computed anyway"
        return tokens, info.model_copy(update={"warnings": [*info.warnings, warning]})
    return tokens, info
