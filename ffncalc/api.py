"""The library's front door: name a model, get its spec and its accounting."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine.inputs import (
    DEFAULT_CONTEXT,
    DEFAULT_CROSSOVER_CONTEXT,
    cache_element_type,
    check_arguments,
    context_of,
    loaded_model,
    stored_as,
)
from .engine.params import account
from .errors import UsageError
from .loading import LoadedModel, load_config, loaded_from
from .overrides import parse_override
from .results import Remarks, Result, json_data
from .source import bundled_models, load_raw_config, presets
from .units import bytes_per_element, parse_context, safetensors_dtype
from .values import Value, replace

# The door re-exports what it hands to the engines and what they answer with.
__all__ = [
    "DEFAULT_CONTEXT", "LoadedModel", "MemoryOptions", "SpeedOptions", "TrainOptions", "account", "cache_element_type",
    "load_config", "loaded_from", "loaded_model", "memory", "speed", "stored_as", "train",
]  # fmt: skip

# The engines of memory, speed and train are imported when their names are first asked for (__getattr__, below), and
# the arithmetic modules by the functions that use them: a command should not pay for creating the classes of every
# other command (derive-dim --dim reads no config at all).
if TYPE_CHECKING:
    from .comparison import CompareRow
    from .compute import CrossoverReport, FlopsReport, Measure, MlaForm
    from .coverage import FamilyCoverage
    from .engine.memory import MemoryOptions, memory
    from .engine.speed import SpeedOptions, speed
    from .engine.train import TrainOptions, train
    from .ffn_width import DeriveDimReport
    from .verification import VerifyReport


def _annotation_names() -> dict[str, Any]:
    """The names api's parameter annotations use that it imports only for type checking."""
    from .compute import Measure, MlaForm

    return {"Measure": Measure, "MlaForm": MlaForm}


def door(function: Any) -> Any:
    """A library function whose arguments are checked against its annotations (engine.inputs.check_arguments)."""
    return check_arguments(function, _annotation_names)


@door
def flops(
    model: str | LoadedModel,
    context: int | str | None = None,
    mla_form: MlaForm = "plain",
    causal: bool = True,
    image: str | None = None,
    audio: str | float | None = None,
) -> FlopsReport:
    """FLOPs per token at CONTEXT (e.g. 8192 or "8k"; default DEFAULT_CONTEXT), prefill of that many tokens, and
    training; with IMAGE ("1024x768"), what one image costs the vision tower and projector; with AUDIO (seconds,
    e.g. "45"), what a clip of that length costs the speech encoder."""
    from .compute import count_flops
    from .images import count_image_flops, parse_image_size
    from .speech import audio_convention, count_audio_flops, parse_audio_seconds

    if context is not None:
        parse_context(context)  # a bad --ctx, --image or --audio is refused before any download
    size = parse_image_size(image) if image is not None else None
    seconds = parse_audio_seconds(str(audio)) if audio is not None else None
    loaded = loaded_model(model)
    remarks = Remarks()
    tokens = context_of(context, loaded, remarks)
    report = count_flops(loaded.spec, tokens, loaded.info, mla_form=mla_form, causal=causal)
    if size is not None:
        report = replace(report, image=count_image_flops(loaded.spec, loaded.info.model, *size))
    if seconds is not None:
        clip = count_audio_flops(loaded.spec, loaded.info.model, seconds)
        conventions = report.conventions + [audio_convention(loaded.spec)]
        report = replace(report, audio=clip, conventions=conventions)
    return remarks.about(report)


@door
def crossover(
    model: str | LoadedModel,
    max_context: int | str | None = None,
    measure: Measure = "flops",
    mla_form: MlaForm = "plain",
    dtype: str | None = None,
) -> CrossoverReport:
    """Where attention's context-dependent cost (FLOPs or KV-cache bytes) overtakes the FFN's, up to MAX_CONTEXT
    (default DEFAULT_CROSSOVER_CONTEXT)."""
    from .compute import count_crossover

    loaded = loaded_model(model)
    remarks = Remarks()
    if max_context is None:  # the default range, 128k, whatever the model's own limit (a note says where n* lies)
        tokens = DEFAULT_CROSSOVER_CONTEXT
    else:  # a chosen context past the model's limit is counted, with a warning
        tokens = context_of(max_context, loaded, remarks)
    element_bytes = None
    if measure == "bytes":
        option = "`dtype`" if dtype else "the config's torch_dtype"
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
    limit, point = loaded.config.max_context(), report.crossover_context_ceil
    if limit is not None and point is not None and point > limit:  # reached by no input the model was built for
        remarks.notes.append(
            f"the crossover ({point:,} tokens) lies beyond this config's {loaded.config.context_field} ({limit:,})"
        )
    return remarks.about(report)


@door
def derive_dim(
    dim: int | None = None,
    multiplier: float | None = None,
    multiple_of: int = 256,  # ffn_width.REFERENCE_MULTIPLE_OF, the reference code's default
    target: int | None = None,
    model: str | LoadedModel | None = None,
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
    model_warnings: list[str] = []  # the model's own, as params prints them
    if model is not None:
        if dim is not None or target is not None:
            raise UsageError("give either `model` or `dim`/`target`, not both")
        loaded = loaded_model(model)
        model_warnings = loaded.info.warnings
        ffn = model_ffn(loaded.spec)
        if ffn is None or not ffn.gated:
            return DeriveDimReport(
                model=loaded.name,
                derivation=None,
                solve=None,
                notes=[not_a_gated_ffn(loaded.name, ffn)],
                warnings=model_warnings,
            )
        name, dim, target = loaded.name, ffn.hidden_size, ffn.intermediate_size
    if dim is None:
        raise UsageError("give `dim` (with `multiplier`, `multiple_of` or `target`) or `model`")
    forwards = target is None or multiplier is not None
    derivation = derive_intermediate_size(dim, multiplier, multiple_of) if forwards else None
    solve = solve_intermediate_size(dim, target) if target is not None else None
    return DeriveDimReport(
        model=name,
        derivation=derivation,
        solve=solve,
        notes=derivation_notes(derivation, solve),
        warnings=model_warnings + degenerate(derivation),
    )


class Comparison(Value):
    """compare's rows, and the warnings of the models they come from (each prefixed with its model's name); it reads
    as its rows (iterate it, index it, take its length)."""

    rows: list[CompareRow]
    warnings: list[str]

    def __iter__(self) -> Iterator[CompareRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> CompareRow:
        return self.rows[index]


@door
def compare(
    models: list[str] | None = None,
    sort: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    live: bool = False,
    overrides: Iterable[str] = (),
) -> Comparison:
    """FFN width, ratio, gating and parameter shares of MODELS (default: the reference table), one row per FFN kind,
    with the warnings `params` would print for each model (the command prints them on stderr).

    A model written MODEL:KEY=VALUE[,KEY=VALUE] is that model with those fields changed (a variant beside its
    original); OVERRIDES change every model. Bundled configs and presets are read from the catalog while it is
    current and unchanged; LIVE counts them anyway."""
    from . import catalog
    from .comparison import COLUMNS, DEFAULT_MODELS, CompareRow, compare_rows, sort_field, sort_rows
    from .overrides import parse_override, split_variant

    if sort and sort_field(sort) is None:
        raise UsageError(
            f"cannot sort by {sort!r}; use a heading (active, total, ffn share …) or a field: {', '.join(COLUMNS)} "
            "(prefix - to sort descending)"
        )
    common = tuple(parse_override(text) for text in overrides)
    rows: list[CompareRow] = []
    warnings: list[str] = []
    for written in models or DEFAULT_MODELS:
        model, own = split_variant(written)
        changes = common + own
        raw = load_raw_config(model, revision=revision, token=token)
        counted = not live and not changes and raw.source in ("bundled", "preset")
        entry = catalog.counted(raw.name, Path(raw.location)) if counted else None
        if entry is not None:
            rows += [CompareRow(**row) for row in entry["compare"]]
            said = list(entry["warnings"])
            name = raw.name
        else:
            loaded = loaded_from(raw, overrides=changes)
            name = loaded.name + (f" [{', '.join(loaded.info.overrides)}]" if changes else "")
            rows += compare_rows(name, loaded.spec, account(loaded))
            said = loaded.info.warnings
        warnings += [f"{name}: {warning}" for warning in said]
    return Comparison(sort_rows(rows, sort), warnings)


@door
def verify(
    model: str,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
    file: str | None = None,
) -> VerifyReport:
    """MODEL's count against its checkpoint's safetensors headers (local folder or Hub), differences explained; a
    .gguf (or a Hub repo with FILE) against its tensor table (gguf_verify)."""
    from .source import is_gguf

    if is_gguf(model, file):
        from .gguf_models import open_gguf
        from .gguf_verify import verify_gguf

        if as_type is not None:
            raise UsageError("`as_type` applies to config.json models; a GGUF is counted as its header says")
        loaded_gguf = open_gguf(model, file, revision, token)
        return verify_gguf(loaded_gguf, account(loaded_gguf))
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


@door
def family_coverage(live: bool = False) -> FamilyCoverage:
    """Every family with its model_types, and how many of transformers' model_types each task covers (the others
    listed with the reason)."""
    from .coverage import task_coverage

    return task_coverage(list_families(live))


@door
def list_families(live: bool = False) -> dict[str, list[str]]:
    """Every supported family, as people name it, with the model_types it reads (from the cache, unless LIVE)."""
    from . import catalog

    listed = None if live else catalog.families()
    return listed if listed is not None else refresh_catalog()["families"]


@door
def list_bundled(live: bool = False, query: str | None = None, family: str | None = None) -> list[BundledModel]:
    """Every bundled config and preset, counted (from the cache, unless LIVE; a miss refreshes the cache): the
    bundled ones first, then the presets, each by name. QUERY keeps those whose name, family or model_type holds
    it (any case); FAMILY those of that family or model_type."""
    from . import catalog

    files = [*bundled_models().items(), *presets().items()]
    entries = [None if live else catalog.counted(name, path) for name, path in files]
    if any(entry is None for entry in entries):
        models = refresh_catalog()["models"]
        entries = [models[name] for name, _ in files]
    rows = [BundledModel(**entry["model"]) for entry in entries if entry is not None]
    if query is not None:
        wanted = query.lower()
        rows = [
            row for row in rows if any(wanted in text.lower() for text in (row.model, row.architecture, row.model_type))
        ]
    if family is not None:
        known = {name.lower() for row in rows for name in (row.architecture, row.model_type)}
        if family.lower() not in known and not any(family.lower() in name for name in known):
            raise UsageError(
                f"`family` {family!r}: no bundled model of that family; the family listing (list_families) names them"
            )
        rows = [row for row in rows if family.lower() in (row.architecture.lower(), row.model_type.lower())]
    return sorted(rows, key=lambda row: (row.source != "bundled", row.model.lower()))


def refresh_catalog() -> dict[str, Any]:
    """Count every bundled config and preset and every family now, and store it as the cache for later listings."""
    from . import catalog

    built = build_catalog()
    catalog.store(built)
    return built


def build_catalog() -> dict[str, Any]:
    """Every bundled config and preset counted (with its file's sha256) and every family named, as the catalog
    holds them (tools/write_catalog.py writes this as the shipped counts)."""
    from . import catalog
    from .comparison import compare_rows
    from .families import families

    models = {}
    for name, path in [*bundled_models().items(), *presets().items()]:
        loaded = load_config(name)
        report = account(loaded)
        row = BundledModel(
            model=name,
            source=report.source,
            architecture=report.architecture,
            model_type=report.model_type,
            total_params=report.total_params,
            active_params=report.active_params,
            active_params_without_embedding=report.active_params_without_embedding,
        )
        models[name] = {
            "sha256": catalog.file_digest(path),
            "model": json_data(row),
            "compare": [json_data(r) for r in compare_rows(loaded.name, loaded.spec, report)],
            "warnings": loaded.info.warnings,
        }
    return {"families": families(), "models": models}


@door
def kv_bytes_per_token(model: str | LoadedModel, dtype: str | None = None) -> int:
    """Bytes one more token adds to MODEL's KV cache (one sequence, past every window), in DTYPE or the config's."""
    from .footprint import kv_cache

    loaded = loaded_model(model)
    element = safetensors_dtype(dtype or loaded.config.stored_dtype or "bfloat16")
    return kv_cache(loaded.spec, DEFAULT_CONTEXT, 1, element).bytes_per_token


@door
def export_config(model: str | LoadedModel) -> dict[str, Any]:
    """The config ffncalc counted: the file as read, with its overrides applied and every default taken written in,
    so that it can be saved, edited and counted again as a path (with the same result)."""
    from .overrides import Override, apply_overrides

    loaded = loaded_model(model)
    changed = apply_overrides(loaded.raw.data, tuple(parse_override(text) for text in loaded.info.overrides))
    defaults = tuple(
        Override(default.field, default.value)
        for default in loaded.info.defaults_used
        if _absent(changed, default.field.split("."))
    )
    return apply_overrides(changed, defaults)


def _absent(data: dict[str, Any], path: list[str]) -> bool:
    """Whether DATA leaves the dotted PATH out (or null), so that writing a default there changes nothing it says."""
    for part in path[:-1]:
        inner = data.get(part)
        if inner is None:
            return True
        if not isinstance(inner, dict):
            return False
        data = inner
    return data.get(path[-1]) is None


_ENGINE_OF = {name: engine for engine in ("memory", "speed", "train") for name in (engine, f"{engine.title()}Options")}


def __getattr__(name: str) -> Any:
    """memory, speed, train and their options classes, from their engines, on first use."""
    engine = _ENGINE_OF.get(name)
    if engine is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".engine.{engine}", __package__), name)
    globals()[name] = value
    return value
