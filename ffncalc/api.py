"""The library's front door: name a model, get its spec and its accounting."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .loading import LoadedModel, load_config, loaded_from
from .overrides import parse_override
from .results import Remarks, Result, json_data
from .source import bundled_models, load_raw_config, presets
from .units import bytes_per_element, parse_context, safetensors_dtype
from .values import Value, field_values, replace

__all__ = ["LoadedModel", "load_config", "loaded_from"]  # re-exported: the library's front door loads models too

# The engine's modules are imported by the functions that use them: a command should not pay for
# creating the classes of every other command (derive-dim --dim reads no config at all).
if TYPE_CHECKING:
    from .accelerators import Accelerator
    from .accounting import ParamsReport
    from .comparison import CompareRow
    from .compute import CrossoverReport, FlopsReport, Measure, MlaForm
    from .coverage import FamilyCoverage
    from .ffn_width import DeriveDimReport
    from .footprint import MemoryReport
    from .roofline import SpeedRun
    from .storage import Scheme
    from .training import TrainReport
    from .verification import VerifyReport


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
    from .footprint import CACHE_DTYPES

    name = safetensors_dtype(dtype)
    if name not in CACHE_DTYPES:
        raise UsageError(
            f"{option} {dtype!r} is not a type a KV cache holds; use a float type: bf16, fp16, fp32, fp8 (E4M3) "
            "or float8_e5m2"
        )
    return name


def account(model: str | LoadedModel) -> ParamsReport:
    """Every parameter of MODEL, by component and by layer."""
    loaded = _load(model)
    from .accounting import count_params

    report = count_params(loaded.spec, loaded.info)
    from .published import PUBLISHED_ACTIVE, matching

    figure = PUBLISHED_ACTIVE.get(loaded.name) if not loaded.info.overrides else None
    if figure is not None and report.active_params is not None and report.active_params_without_embedding is not None:
        match = matching(figure, report.active_params, report.active_params_without_embedding)
        report = replace(
            report,
            published_active=f"{figure.billions}B",
            published_active_source=figure.source,
            published_active_matches=match,
        )
    published = getattr(loaded.config, "published_params", None)
    if published:
        source = getattr(loaded.config, "published_source", None) or None
        report = replace(report, published_params=published, published_source=source)
    return report


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
    loaded = _load(model)
    remarks = Remarks()
    tokens = _context(context, loaded, remarks)
    report = count_flops(loaded.spec, tokens, loaded.info, mla_form=mla_form, causal=causal)
    if size is not None:
        report = replace(report, image=count_image_flops(loaded.spec, loaded.info.model, *size))
    if seconds is not None:
        clip = count_audio_flops(loaded.spec, loaded.info.model, seconds)
        conventions = report.conventions + [audio_convention(loaded.spec)]
        report = replace(report, audio=clip, conventions=conventions)
    return remarks.about(report)


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

    loaded = _load(model)
    remarks = Remarks()
    if max_context is None:  # the default range, 128k, whatever the model's own limit (a note says where n* lies)
        tokens = DEFAULT_CROSSOVER_CONTEXT
    else:  # a chosen context past the model's limit is counted, with a warning
        tokens = _context(max_context, loaded, remarks)
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
        loaded = _load(model)
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


def compare(
    models: list[str] | None = None,
    sort: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    live: bool = False,
    overrides: Iterable[str] = (),
) -> list[CompareRow]:
    """FFN width, ratio, gating and parameter shares of MODELS (default: the reference table), one row per FFN kind.

    A model written MODEL:KEY=VALUE[,KEY=VALUE] is that model with those fields changed (a variant beside its
    original); OVERRIDES change every model. Bundled configs and presets are read from the catalog while it is
    current and unchanged; LIVE counts them anyway."""
    return compare_models(models, sort, revision, token, live, overrides).rows


class Comparison(Value):
    """compare's rows, and the warnings of the models they come from (each prefixed with its model's name)."""

    rows: list[CompareRow]
    warnings: list[str]


def compare_models(
    models: list[str] | None = None,
    sort: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    live: bool = False,
    overrides: Iterable[str] = (),
) -> Comparison:
    """compare(), with the warnings `params` would print for each model (`compare` prints them on stderr)."""
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


def family_coverage(live: bool = False) -> FamilyCoverage:
    """Every family with its model_types, and how many of transformers' model_types each task covers (the others
    listed with the reason)."""
    from .coverage import task_coverage

    return task_coverage(list_families(live))


def list_families(live: bool = False) -> dict[str, list[str]]:
    """Every supported family, as people name it, with the model_types it reads (from the cache, unless LIVE)."""
    from . import catalog

    listed = None if live else catalog.families()
    return listed if listed is not None else refresh_catalog()["families"]


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


class MemoryOptions(Value):
    """What `memory` counts: the context and batch, the weights' and cache's dtypes, training, the GPUs, and the
    serving engine whose KV-cache arithmetic to follow."""

    context: int | str | None = None  # tokens (8192 or "8k"); None: DEFAULT_CONTEXT, capped at the model's own limit
    batch: int = 1
    dtype: str | None = None  # what if every weight were stored so (WHAT_IF); None: as the checkpoint stores them
    kv_dtype: str | None = None  # the cache's element type; None: the weights' dtype (BF16 for quantized weights)
    train: bool = False
    optimizer: str = "adamw"
    recompute: str = "none"
    zero_stage: int = 0
    gpus: int = 1  # inference: the GPUs the model is split across (tensor parallel); training: all GPUs of the job
    tensor_parallel: int | None = None  # None: inference over `gpus`, training without tensor parallelism
    sequence_parallel: bool = False  # training: Megatron's sequence parallelism across the tensor-parallel ranks
    gpu_memory: str | None = None  # another accelerator's memory, e.g. "96GB"
    chunk: int = 2048  # prefill chunk of the activation buffer, in tokens
    # Serving: an engine's KV-cache arithmetic (serving.py). "none", "vllm", "vllm@0.11" or "sglang".
    engine: str = "none"
    gpu: str | None = None  # the accelerator an engine's budget and --solve use; None: --gpu-memory, else h100
    kv_budget: str | None = None  # the KV-cache memory per GPU the engine printed, e.g. "40GiB": skips the budget
    gpu_memory_utilization: float | None = None  # vLLM's gpu_memory_utilization / SGLang's mem_fraction_static
    max_num_batched_tokens: int | None = None  # None: vLLM's default for the accelerator
    block_size: int | None = None  # None: vLLM's (16; 64 for MLA)
    runtime_reserve: str | None = None  # None: accelerators.RUNTIME_RESERVE
    solve: str | None = None  # "ctx", "batch" or "concurrency": the largest that fits
    expert_parallel: int = 1  # with an engine: routed experts over this many GPUs (serving_layout); training: over
    # this many of the data-parallel ranks (layouts)
    dp_attention: bool = False  # with an engine: attention data-parallel, each GPU its own requests' KV
    # Training's layout (layouts.training_layout, as `train` counts it): the busiest pipeline rank's memory per GPU
    pipeline_parallel: int = 1
    context_parallel: int = 1
    data_parallel: int | None = None  # None: gpus ÷ (tensor_parallel · pipeline_parallel · context_parallel)
    virtual_stages: int = 1
    micro_batch: int | None = None  # None: batch
    global_batch: int | None = None  # sequences per optimizer step; None: micro_batch × data-parallel ranks
    recompute_modules: tuple[str, ...] = ()  # with recompute "selective": Megatron-LM's modules (layouts)
    # Training
    attention: str = "flash"  # "flash" (no s × s scores stored) or "eager" (Korthikanti et al.'s full formula)
    lora_rank: int | None = None  # LoRA adapters of this rank on the attention and FFN projections, base frozen

    def checked(self) -> MemoryOptions:
        """These options, or a UsageError naming the first that cannot be counted (before any download)."""
        from .serving import parse_engine

        if self.context is not None:
            parse_context(self.context)
        for name, value in (("batch", self.batch), ("gpus", self.gpus), ("chunk", self.chunk)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1 << 20:
                raise UsageError(f"--{name} must be a whole number from 1 to {1 << 20:,} (got {value})")
        if self.zero_stage not in (0, 1, 2, 3):
            raise UsageError(f"`zero_stage` must be 0, 1, 2 or 3 (got {self.zero_stage})")
        if self.recompute not in ("none", "selective", "full"):
            raise UsageError(f"`recompute` must be none, selective or full (got {self.recompute!r})")
        if self.kv_dtype is not None:
            cache_element_type(self.kv_dtype, "`kv_dtype`")
        engine = parse_engine(self.engine)
        serving = (self.kv_budget, self.gpu_memory_utilization, self.max_num_batched_tokens, self.block_size)
        if engine.engine == "none" and any(value is not None for value in serving):
            raise UsageError(
                "`kv_budget`, `gpu_memory_utilization`, `max_num_batched_tokens` and `block_size` apply to an "
                "engine; add `engine` vllm (or sglang)"
            )
        for name, number in (
            ("`max_num_batched_tokens`", self.max_num_batched_tokens),
            ("`block_size`", self.block_size),
        ):
            if number is not None and not 1 <= number <= 1 << 24:
                raise UsageError(f"{name} must be a whole number from 1 to {1 << 24:,} (got {number})")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise UsageError(
                f"`gpu_memory_utilization` must be above 0 and at most 1, e.g. 0.9 (got {self.gpu_memory_utilization})"
            )
        if self.solve is not None and self.solve not in ("ctx", "batch", "concurrency"):
            raise UsageError(f"`solve` must be ctx, batch or concurrency (got {self.solve!r})")
        if ((self.expert_parallel != 1 and not self.train) or self.dp_attention) and engine.engine == "none":
            raise UsageError(
                "`expert_parallel` and `dp_attention` follow an engine's layout (or training's); add `engine` sglang "
                "(or vllm), or `train`"
            )
        self._check_layout()
        if not 1 <= self.expert_parallel <= 1024:
            raise UsageError(f"`expert_parallel` must be a whole number from 1 to 1,024 (got {self.expert_parallel})")
        if (self.expert_parallel != 1 or self.dp_attention) and self.solve is not None:
            raise UsageError("`solve` with `expert_parallel` or `dp_attention` is not modelled; drop `solve`")
        if self.solve == "concurrency" and engine.engine == "none":
            raise UsageError("`solve` concurrency is the engine's figure; add `engine` vllm (or use `solve` batch)")
        if self.attention not in ("flash", "eager"):
            raise UsageError(f"`attention` must be flash or eager (got {self.attention!r})")
        training_only = self.lora_rank is not None or self.attention != "flash"
        if training_only and not self.train:
            raise UsageError("`attention` and `lora_rank` apply to `train`; add `train`")
        if self.lora_rank is not None and not 1 <= self.lora_rank <= 1 << 16:
            raise UsageError(f"`lora_rank` must be a whole number from 1 to 65,536 (got {self.lora_rank})")
        if self.lora_rank is not None and self.zero_stage:
            raise UsageError(
                "`lora_rank` with `zero_stage` is not modelled (ZeRO would shard only the adapters' states)"
            )
        tp = self.tensor_parallel
        if tp is not None and (not isinstance(tp, int) or isinstance(tp, bool) or not 1 <= tp <= 1 << 20):
            raise UsageError(f"`tensor_parallel` must be a whole number from 1 to {1 << 20:,} (got {tp})")
        if tp is not None and self.gpus > 1 and self.gpus % tp:
            raise UsageError(
                f"`gpus` {self.gpus} is not a multiple of `tensor_parallel` {tp}: data-parallel ranks are `gpus` ÷ `tensor_parallel`"
            )
        if tp is not None and self.gpus > 1 and not self.train and self.gpus != tp:
            raise UsageError(
                "without `train` the model is split across `tensor_parallel` GPUs; give `tensor_parallel` or `gpus`, not both"
            )
        if self.sequence_parallel and not self.train:
            raise UsageError("`sequence_parallel` applies to `train`; add `train`")
        if self.sequence_parallel and (tp or 1) < 2:
            raise UsageError(
                "`sequence_parallel` splits activations across tensor-parallel ranks; add `tensor_parallel` 2 or more"
            )
        if self.lora_rank is not None and (tp or 1) > 1:
            raise UsageError(
                "`lora_rank` with `tensor_parallel` is not modelled (how adapters split across ranks varies); drop `tensor_parallel`"
            )
        if self.zero_stage == 3 and self.train and self.data_parallel_ranks * self.context_parallel == 1:
            raise UsageError(
                "`zero_stage` 3 on one data-parallel rank shards nothing; give `gpus` 2 or more, or `zero_stage` 0"
            )
        return self

    LAYOUT_FIELDS = (
        "pipeline_parallel", "context_parallel", "data_parallel", "virtual_stages", "micro_batch", "global_batch",
    )  # fmt: skip

    def _check_layout(self) -> None:
        """The training layout's fields: whole numbers, given only with `train`, with the optimizer and attention the
        layout counts (layouts.rank_memory: AdamW in mixed precision, FlashAttention, every weight trained)."""
        given = []
        for name in self.LAYOUT_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1 << 24:
                raise UsageError(f"`{name}` must be a whole number from 1 to {1 << 24:,} (got {value})")
            if value != 1 or name in ("data_parallel", "micro_batch", "global_batch"):
                given.append(f"`{name}`")
        if self.recompute_modules:
            given.append("`recompute_modules`")
        if given and not self.train:
            raise UsageError(f"{', '.join(given)}: a training layout; add `train`")
        if self.micro_batch is not None and self.batch != 1 and self.micro_batch != self.batch:
            raise UsageError("`batch` and `micro_batch` both give training's sequences per GPU; give one")
        if self.train and not self.layout_counted and (given or self.expert_parallel != 1):
            raise UsageError(
                f"{', '.join(given) or '`expert_parallel`'}: a training layout is counted as the train command "
                "counts it, with `optimizer` adamw, `attention` flash and no `lora_rank`"
            )

    @property
    def layout_counted(self) -> bool:
        """Training memory is the layout's busiest rank (as `train` counts it): AdamW, FlashAttention, no LoRA."""
        return self.optimizer == "adamw" and self.attention == "flash" and self.lora_rank is None

    @property
    def inference_parallel(self) -> int:
        """The GPUs inference splits the model across: `tensor_parallel`, else `gpus`."""
        return self.tensor_parallel or self.gpus

    @property
    def training_parallel(self) -> int:
        """Training's tensor-parallel ranks: `tensor_parallel`, else none."""
        return self.tensor_parallel or 1

    @property
    def data_parallel_ranks(self) -> int:
        """Training's data-parallel ranks: `data_parallel`, else all the job's GPUs ÷ (tp · pp · cp)."""
        if self.data_parallel is not None:
            return self.data_parallel
        model = self.training_parallel * self.pipeline_parallel * self.context_parallel
        return max(self.gpus, model) // model


def memory(
    model: str | LoadedModel, context: int | str | None = None, options: MemoryOptions | None = None, **changes: Any
) -> MemoryReport:
    """Will MODEL fit: weights (as stored, or as a dtype), KV cache at CONTEXT × batch, activations, training.

    OPTIONS (or keyword CHANGES to the defaults, e.g. batch=8, kv_dtype="fp8") say what to count."""
    from .footprint import ACCELERATORS, count_memory

    options = replace(options or MemoryOptions(), **changes)
    if context is not None:
        options = replace(options, context=context)
    options.checked()
    loaded = _load(model)
    from .parallel import check_tensor_parallel

    parallel_layout = None
    if options.train:
        check_tensor_parallel(loaded.spec, options.training_parallel, "training")
    else:
        check_tensor_parallel(loaded.spec, options.inference_parallel, "serving")
    remarks = Remarks()
    tokens = _context(options.context, loaded, remarks)
    weights = stored_as(loaded, options.dtype, options.kv_dtype)
    weight_dtype, scheme, cache_dtype = weights.dtype, weights.scheme, weights.cache_dtype
    remarks.notes += weights.notes
    if options.dtype is None and options.engine.strip().lower() != "none":
        from .serving import engine_dtype, parse_engine

        version = parse_engine(options.engine)
        encoder_only = not any(layer.stack == "decoder" for layer in loaded.spec.layers)
        served = engine_dtype(version, weight_dtype, encoder_only)
        if served != weight_dtype:
            remarks.notes.append(
                f"{version.engine} serves this {weight_dtype} checkpoint in {served} (its dtype='auto' downcasts "
                f"float32 weights): weights and KV cache are counted in {served} (`dtype` to choose)."
            )
            options = replace(options, dtype={"BF16": "bf16", "F16": "fp16"}[served])  # --solve counts it so too
            weights = stored_as(loaded, options.dtype, options.kv_dtype)
            weight_dtype, scheme, cache_dtype = weights.dtype, weights.scheme, weights.cache_dtype
    if options.train and scheme is not None and options.lora_rank is not None:
        remarks.notes.append(
            f"`train` with {scheme.method} weights and `lora_rank`: QLoRA-style, the base frozen as stored "
            f"({scheme.method}, no gradients, no optimizer states) and the 16-bit adapters trained in mixed precision."
        )
    elif options.train and scheme is not None:
        remarks.notes.append(
            f"`train` with {scheme.method} weights: the training figures are full training in 16-bit mixed precision "
            "(2 bytes a weight and a gradient, the optimizer's float32 states); a quantized model is trained only as "
            "a frozen base with adapters (add `lora_rank` for QLoRA-style figures)."
        )
    accelerators = dict(ACCELERATORS)
    asked = None
    if options.gpu is not None or options.gpu_memory is not None:
        asked, asked_memory = _serving_gpu(options)
        accelerators = {asked: asked_memory} | accelerators
    reserve = _runtime_reserve(options.runtime_reserve)
    if options.train and options.layout_counted:
        from functools import partial

        from .layouts import layout_training, training_layout

        parallel_layout = training_layout(
            loaded.spec,
            tokens,
            max(options.gpus, options.training_parallel * options.pipeline_parallel * options.context_parallel),
            tp=options.training_parallel,
            pp=options.pipeline_parallel,
            cp=options.context_parallel,
            ep=options.expert_parallel,
            dp=options.data_parallel,
            vpp=options.virtual_stages,
            micro_batch=options.micro_batch or options.batch,
            global_batch=options.global_batch,
            sequence_parallel=options.sequence_parallel,
            zero_stage=options.zero_stage,
            recompute=options.recompute,
            recompute_modules=options.recompute_modules,
        )
    report = count_memory(
        loaded.spec,
        loaded.info,
        weight_dtype=weight_dtype,
        scheme=scheme,
        context=tokens,
        batch=options.batch,
        kv_dtype=cache_dtype,
        chunk=options.chunk,
        gpus=options.inference_parallel,
        accelerators=accelerators,
        train=options.train,
        optimizer=options.optimizer,  # type: ignore[arg-type]
        recompute=options.recompute,  # type: ignore[arg-type]
        zero_stage=options.zero_stage,
        data_parallel=options.data_parallel_ranks,
        tensor_parallel=options.training_parallel,
        sequence_parallel=options.sequence_parallel,
        layout_training=None
        if parallel_layout is None
        else partial(layout_training, loaded.spec, layout=parallel_layout, context=tokens),
        reserve=reserve,
        attention=options.attention,  # type: ignore[arg-type]
        lora_rank=options.lora_rank,
        asked=asked,
    )
    if options.engine.strip().lower() != "none" or options.solve is not None:
        report = _serve(loaded, report, options, tokens, weight_dtype, scheme, cache_dtype, reserve)
        if report.engine is not None and report.engine.max_concurrency < 1:
            remarks.warnings.append(
                f"{report.engine.engine} would refuse to start: one request of {tokens:,} tokens needs more KV cache "
                f"than the {report.engine.kv_capacity_tokens:,} tokens it has room for (a shorter context, its "
                "max_model_len, or more GPUs)"
            )
    return remarks.about(report)


def _runtime_reserve(text: str | None) -> int:
    """`runtime_reserve`: a size (0 for none), or accelerators.RUNTIME_RESERVE."""
    from .accelerators import RUNTIME_RESERVE
    from .units import parse_size

    if text is None:
        return RUNTIME_RESERVE
    if text.strip().rstrip("GgMmIiBb").strip() in ("0", "0.0"):
        return 0
    return parse_size(text)


def _serving_gpu(options: MemoryOptions) -> tuple[str, int]:
    """The accelerator an engine's budget and `solve` use: `gpu`, else `gpu_memory`, else the H100."""
    from .accelerators import accelerator

    if options.gpu is not None:
        chip = accelerator(options.gpu)
        return chip.name, chip.memory
    if options.gpu_memory is not None:
        return f"your GPU ({options.gpu_memory.strip()})", _gpu_memory(options.gpu_memory)
    chip = accelerator("h100")
    return chip.name, chip.memory


def _serve(
    loaded: LoadedModel,
    report: MemoryReport,
    options: MemoryOptions,
    context: int,
    weight_dtype: str,
    scheme: Any,
    cache_dtype: str,
    reserve: int,
) -> MemoryReport:
    """The engine's KV-cache figures (serving.py) and `solve`, added to REPORT."""
    from fractions import Fraction

    from .footprint import inference_activations, per_gpu_weights, weight_layout, weight_shares
    from .serving import (
        SGLANG_DEFAULTS_SOURCE,
        VLLM_DEFAULTS_SOURCE,
        VLLM_GPU_MEMORY_UTILIZATION,
        Budget,
        engine_report,
        estimated_budget,
        parse_engine,
        sglang_default_chunked_prefill_size,
        vllm_default_max_num_batched_tokens,
    )
    from .units import DTYPE_BYTES, parse_size

    version = parse_engine(options.engine)
    gpu_name, gpu_memory = _serving_gpu(options)
    tp = options.inference_parallel
    layout = None
    if options.expert_parallel != 1 or options.dp_attention:
        from .roofline import engine_weights
        from .serving_layout import ServingLayout, check_layout

        layout = ServingLayout(
            tensor_parallel=tp, expert_parallel=options.expert_parallel, dp_attention=options.dp_attention
        )
        check_layout(loaded.spec, layout)
    state_size = DTYPE_BYTES[weight_dtype if weight_dtype in ("F32", "F16", "BF16") else "BF16"]
    if options.max_num_batched_tokens is not None:
        batched, batched_source = options.max_num_batched_tokens, "`max_num_batched_tokens`"
    elif version.engine == "sglang":
        batched = sglang_default_chunked_prefill_size(gpu_memory)
        batched_source = f"SGLang's default chunked_prefill_size on {gpu_name} ({SGLANG_DEFAULTS_SOURCE})"
    else:
        batched = vllm_default_max_num_batched_tokens(gpu_memory, gpu_name)
        batched_source = f"vLLM's default for `vllm serve` on {gpu_name} ({VLLM_DEFAULTS_SOURCE})"
    engine = None
    if version.engine != "none":
        if options.kv_budget is not None:
            budget = Budget(parse_size(options.kv_budget), True)
        else:
            utilization = (
                Fraction(str(options.gpu_memory_utilization))
                if options.gpu_memory_utilization is not None
                else VLLM_GPU_MEMORY_UTILIZATION
            )
            stored = weight_layout(loaded.spec, weight_dtype, scheme)
            if layout is None:
                weights, _ = per_gpu_weights(weight_shares(stored), tp)
            else:
                weights = engine_weights(stored, layout, version.engine)
            peak = inference_activations(loaded.spec, 1, batched, state_size).bytes
            budget = estimated_budget(version.engine, gpu_memory, utilization, weights, peak, reserve)
        engine = engine_report(
            loaded.spec, version, budget, context=context, kv_size=DTYPE_BYTES[cache_dtype], state_size=state_size,
            tp=tp if layout is None else layout.attention_split, batched=batched, batched_source=batched_source,
            block_size=options.block_size,
        )  # fmt: skip
        if layout is not None:
            from .serving_layout import layout_note

            engine = replace(engine, tensor_parallel=tp, notes=[*engine.notes, layout_note(layout, version.engine)])
        model_limit = loaded.config.max_context()
        if model_limit is not None and engine.max_context > model_limit:
            # vLLM's max_model_len defaults to the model's own limit and refuses a longer request.
            engine = replace(
                engine,
                max_context=model_limit,
                notes=[
                    *engine.notes,
                    f"the longest single request stops at the model's limit, {model_limit:,} tokens (the cache "
                    "would hold more)",
                ],
            )
    solved = None
    if options.solve is not None:
        solved = _solve(loaded, options, engine, context, gpu_name, gpu_memory - reserve)
    return replace(report, engine=engine, solved=solved)


def _solve(loaded: LoadedModel, options: MemoryOptions, engine: Any, context: int, gpu_name: str, limit: int) -> Any:
    """`solve`: the engine's answer (its longest context, whole requests, concurrency) beside the largest whole
    context or batch for which ffncalc's weights + KV cache + activations per GPU fit LIMIT (by bisection)."""
    from .footprint import Solved

    plain = replace(
        options, engine="none", solve=None, train=False, lora_rank=None, attention="flash", zero_stage=0,
        kv_budget=None, gpu_memory_utilization=None, max_num_batched_tokens=None, block_size=None,
    )  # fmt: skip

    def per_gpu(ctx: int, batch: int) -> int:
        return memory(loaded, options=replace(plain, context=ctx, batch=batch)).per_gpu_inference

    model_limit = None
    if options.solve == "ctx":
        # A context past the model's own limit is no answer (vLLM refuses a max_model_len past it): the search
        # stops there, and the answer says so when it reaches it.
        model_limit = loaded.config.max_context()
        without = _largest(lambda n: per_gpu(n, options.batch) <= limit, model_limit or 1 << 24)
        value: int | float = engine.max_context if engine is not None else without
        how = f"the longest context of {options.batch:,} sequence(s)"
    else:
        without = _largest(lambda n: per_gpu(context, n) <= limit, 1 << 20)
        if engine is None:
            value = without
        else:
            value = engine.max_concurrency if options.solve == "concurrency" else int(engine.max_concurrency)
        how = f"sequences of {context:,} tokens at once"
    reached = model_limit if model_limit is not None and value >= model_limit else None
    return Solved(
        what=options.solve or "",
        value=value,
        without_engine=without,
        memory=limit,
        how=how + f" on {gpu_name} × {options.inference_parallel} (tensor parallel), after the runtime reserve",
        gpu=gpu_name,
        fits=value > 0,
        limit=reached,
    )


def _largest(fits: Any, limit: int) -> int:
    """The largest n in [1, LIMIT] with FITS(n) (FITS growing false past one point), or 0 when FITS(1) is false."""
    if not fits(1):
        return 0
    low, high = 1, limit
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def kv_bytes_per_token(model: str | LoadedModel, dtype: str | None = None) -> int:
    """Bytes one more token adds to MODEL's KV cache (one sequence, past every window), in DTYPE or the config's."""
    from .footprint import kv_cache

    loaded = _load(model)
    element = safetensors_dtype(dtype or loaded.config.stored_dtype or "bfloat16")
    return kv_cache(loaded.spec, DEFAULT_CONTEXT, 1, element).bytes_per_token


def _gpu_memory(text: str) -> int:
    """`gpu_memory`: a size (96GB, 80GiB) or an accelerator's name from the accelerator table (h100, mi300x)."""
    from .accelerators import accelerator
    from .units import SIZE, parse_size

    return parse_size(text) if SIZE.match(text) or text.strip()[:1].isdigit() else accelerator(text).memory


def export_config(model: str | LoadedModel) -> dict[str, Any]:
    """The config ffncalc counted: the file as read, with its overrides applied and every default taken written in,
    so that it can be saved, edited and counted again as a path (with the same result)."""
    from .overrides import Override, apply_overrides

    loaded = _load(model)
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


class StoredAs(Value):
    """How a command takes the weights and the cache: the dtype of what is not quantized, the quantization scheme,
    the KV cache's element type, and what to say about the choice."""

    dtype: str
    scheme: Scheme | None
    cache_dtype: str
    notes: tuple[str, ...]


def stored_as(loaded: LoadedModel, dtype: str | None, kv_dtype: str | None) -> StoredAs:
    """The weights as the checkpoint stores them (the config's dtype and quantization_config), or as DTYPE asks
    (WHAT_IF); the cache in KV_DTYPE, else the weights' float type (BF16 for quantized weights)."""
    from .footprint import WHAT_IF
    from .storage import parse_scheme

    notes: list[str] = []
    if dtype is not None:
        key = dtype.lower()
        if key not in WHAT_IF:
            raise UsageError(f"`dtype` {dtype!r}: use one of {', '.join(WHAT_IF)}")
        weight_dtype, scheme = WHAT_IF[key]
        if key in WHAT_IF_LAYOUTS:
            notes.append(f"`dtype` {key}: {WHAT_IF_LAYOUTS[key]}; embeddings, norms and the head stay in BF16.")
    else:
        stored = loaded.config.stored_dtype
        weight_dtype = safetensors_dtype(stored) if stored else "BF16"
        if stored is None:
            notes.append(
                "The config names no dtype: weights assumed stored in bfloat16, as most checkpoints are (`dtype` to choose)."
            )
        scheme = parse_scheme(loaded.config.quantization)
    floats = weight_dtype if weight_dtype in ("F32", "F16", "BF16") else "BF16"
    cache_dtype = cache_element_type(kv_dtype, "`kv_dtype`") if kv_dtype else floats
    return StoredAs(weight_dtype, scheme, cache_dtype, tuple(notes))


def _load(model: str | LoadedModel) -> LoadedModel:
    """MODEL as loaded: a LoadedModel as it is, a name loaded as it stands (load_config for a revision, `as_type` or `sets`)."""
    if isinstance(model, LoadedModel):
        return model
    from .gguf_models import open_gguf
    from .source import is_gguf

    return open_gguf(model) if is_gguf(model) else load_config(model)


DEFAULT_CONTEXT = 8192  # flops and memory without --ctx; capped at the model's own limit
DEFAULT_CROSSOVER_CONTEXT = 128 * 1024  # crossover without --ctx: contexts from 1k doubling up to 128k


def _context(context: int | str | None, loaded: LoadedModel, remarks: Remarks) -> int:
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


MAX_OUTPUT = 1 << 24  # tokens a request generates (--output)


class SpeedOptions(Value):
    """What `speed` estimates: the accelerators, context, prompt and batches, parallelism, dtypes and efficiencies."""

    accelerators: str | tuple[str, ...] = "h100"  # names from the accelerator table, comma-separated or as a tuple
    context: int | str | None = None  # decode context (default DEFAULT_CONTEXT, capped at the model's limit)
    prompt: int | str | None = None  # prefill prompt (default: the context)
    batches: str | tuple[int, ...] = "1"  # "1,8,64" or (1, 8, 64)
    tensor_parallel: int = 1
    expert_parallel: int = 1  # routed experts split over this many of the tensor_parallel GPUs (serving_layout)
    dp_attention: bool = False  # attention data-parallel over the tensor_parallel GPUs (SGLang's DP attention)
    pipeline_parallel: int = 1  # stages the layers split into, each over its own tensor_parallel GPUs
    disaggregate: str | None = None  # "P:D": prefill and decode on pools of P and D GPUs (needs output)
    dtype: str | None = None  # what if every weight were stored so (WHAT_IF); None: as the checkpoint stores them
    kv_dtype: str | None = None
    compute_dtype: str | None = None  # the matmuls' dtype (default: the weights')
    compute_efficiency: float = 1.0
    bandwidth_efficiency: float = 1.0
    attention: str = "fused"  # "fused" (FlashAttention-style) or "eager"
    gpu_flops: float | None = None  # another chip: dense FLOP/s, bytes/s and memory
    gpu_bandwidth: float | None = None
    gpu_memory: str | None = None
    gpu_interconnect: float | None = None  # bytes/s per direction, for tensor parallelism on that chip
    gpu_name: str | None = None  # what to call that chip
    engine: str | None = None  # the serving engine whose fitted profile gives the expected times; None: typical
    output: int | None = None  # tokens each request generates: adds the request end to end (TTFT + decode steps)
    measured_tpot: float | None = None  # seconds: a measured time per output token to set beside the figures
    measured_ttft: float | None = None  # seconds: a measured time to first token
    cache_type: str | None = None  # a GGUF under llama.cpp: its KV cache type (f16, q8_0, q4_0 …); None: f16

    def checked(self) -> SpeedOptions:
        """These options, or a UsageError naming the first that cannot be estimated (before any download)."""
        from .accelerators import DTYPES
        from .expected import ENGINES

        if self.engine is not None and self.engine.lower() not in ENGINES:
            raise UsageError(
                f"`engine` {self.engine[:20]!r} has no profile; use one of {', '.join(ENGINES)} "
                "(or leave it out for the typical profile)"
            )
        for text in (self.context, self.prompt):
            if text is not None:
                parse_context(text)
        _batches(self.batches)
        if not 1 <= self.tensor_parallel <= 1024:
            raise UsageError(f"`tensor_parallel` must be a whole number from 1 to 1,024 (got {self.tensor_parallel})")
        if not 1 <= self.expert_parallel <= 1024:
            raise UsageError(f"`expert_parallel` must be a whole number from 1 to 1,024 (got {self.expert_parallel})")
        if self.disaggregate is not None and self.output is None:
            raise UsageError("`disaggregate` times whole requests; add `output` N (tokens each request generates)")
        if not 1 <= self.pipeline_parallel <= 1024:
            raise UsageError(
                f"`pipeline_parallel` must be a whole number from 1 to 1,024 (got {self.pipeline_parallel})"
            )
        for name, value in (
            ("`compute_efficiency`", self.compute_efficiency),
            ("`bandwidth_efficiency`", self.bandwidth_efficiency),
        ):
            if not 0 < value <= 1:
                raise UsageError(f"{name} must be above 0 and at most 1, e.g. 0.7 (got {value})")
        if self.attention not in ("fused", "eager"):
            raise UsageError(f"`attention` must be fused or eager (got {self.attention!r})")
        if self.compute_dtype is not None and self.compute_dtype.lower() not in DTYPES:
            raise UsageError(f"`compute_dtype` {self.compute_dtype!r}: use one of {', '.join(DTYPES)}")
        if self.kv_dtype is not None:
            cache_element_type(self.kv_dtype, "`kv_dtype`")
        if self.cache_type is not None:
            from .llamacpp import CACHE_TYPES

            if self.cache_type.lower() not in CACHE_TYPES:
                raise UsageError(
                    f"`cache_type` {self.cache_type[:20]!r}: use one of llama.cpp's cache types: {', '.join(CACHE_TYPES)}"
                )
        for flag, measured in (("`measured_tpot`", self.measured_tpot), ("`measured_ttft`", self.measured_ttft)):
            if measured is not None and not 0 < measured < float("inf"):
                raise UsageError(f"{flag} must be a positive time in milliseconds, e.g. 6.5 (got {measured * 1000:g})")
        if self.output is not None and not 1 <= self.output <= MAX_OUTPUT:
            raise UsageError(f"`output` must be a whole number of tokens from 1 to {MAX_OUTPUT:,}, e.g. 1024")
        if (self.gpu_flops is None) != (self.gpu_bandwidth is None):
            raise UsageError("describe another chip with both `gpu_flops` and `gpu_bandwidth` (and `gpu_memory`)")
        chip_figures: tuple[tuple[str, float | None, float, float, str], ...] = (
            ("`gpu_flops`", self.gpu_flops, 1e9, 1e18, "989e12"),
            ("`gpu_bandwidth`", self.gpu_bandwidth, 1e6, 1e15, "3.35e12"),
            ("`gpu_interconnect`", self.gpu_interconnect, 1e6, 1e15, "450e9"),
        )
        for name, figure, low, high, example in chip_figures:
            # Past these a chip is no chip: a GFLOP/s to an exaFLOP/s, a MB/s to a PB/s (nan and inf included).
            if figure is not None and not (isinstance(figure, (int, float)) and low <= figure <= high):
                raise UsageError(
                    f"{name} must be from {low:.0e} to {high:.0e} per second, e.g. {example} (got {figure})"
                )
        if self.gpu_name is not None and not 1 <= len(self.gpu_name.strip()) <= 40:
            raise UsageError("`gpu_name` takes 1 to 40 characters, e.g. 'H20'")
        return self

    def chips(self) -> list[Accelerator]:
        """The accelerators to estimate on: the one `gpu_flops`/`gpu_bandwidth` describe, or those named."""
        from .accelerators import Accelerator, accelerator

        if self.gpu_flops is not None and self.gpu_bandwidth is not None:
            memory_bytes = _gpu_memory(self.gpu_memory) if self.gpu_memory is not None else 1 << 50
            link = round(self.gpu_interconnect) if self.gpu_interconnect is not None else None
            name = self.gpu_name.strip() if self.gpu_name is not None else "your GPU"
            return [
                Accelerator(
                    name, (), (("bf16", round(self.gpu_flops)),), round(self.gpu_bandwidth), memory_bytes, link,
                    "as given" if link else "", "as given", ("`gpu_flops`, `gpu_bandwidth`, `gpu_memory`, `gpu_interconnect` as given",),
                )
            ]  # fmt: skip
        names = self.accelerators.split(",") if isinstance(self.accelerators, str) else list(self.accelerators)
        chips = [accelerator(name) for name in names if name.strip()]
        if not chips:
            raise UsageError("`accelerators` names none; e.g. `accelerators` h100, or h100,h200 for several")
        return chips


def speed(
    model: str | LoadedModel,
    accelerators: str | tuple[str, ...] | None = None,
    options: SpeedOptions | None = None,
    **changes: Any,
) -> SpeedRun:
    """Roofline ceilings of decode (per batch) and prefill of MODEL on each of ACCELERATORS (see
    ffncalc.roofline), each with the expected time of OPTIONS.engine's fitted profile beside it (ffncalc.expected);
    OPTIONS, or keyword CHANGES to the defaults (context="32k", batches="1,64"), say what."""
    from functools import partial

    from .accelerators import RUNTIME_RESERVE
    from .expected import with_expected, with_measured, with_request
    from .footprint import weight_layout
    from .roofline import FirstNotFitting, SpeedRun, compute_dtype_for, estimate_speed, gpu_figures, sublayer_count

    options = replace(options or SpeedOptions(), **changes)
    if accelerators is not None:
        options = replace(options, accelerators=accelerators)
    options.checked()
    chips = options.chips()
    batch_list = _batches(options.batches)
    context, prompt, dtype, kv_dtype = options.context, options.prompt, options.dtype, options.kv_dtype
    compute_dtype, tensor_parallel, attention = options.compute_dtype, options.tensor_parallel, options.attention
    compute_efficiency, bandwidth_efficiency = options.compute_efficiency, options.bandwidth_efficiency
    loaded = _load(model)
    from .parallel import check_tensor_parallel

    store = _llamacpp_store(loaded, options)
    check_tensor_parallel(loaded.spec, tensor_parallel, "serving")
    from .serving_layout import ServingLayout, check_layout

    layout = ServingLayout(
        tensor_parallel=tensor_parallel,
        expert_parallel=options.expert_parallel,
        pipeline_parallel=options.pipeline_parallel,
        dp_attention=options.dp_attention,
    )
    check_layout(loaded.spec, layout)
    if not any(layer.stack == "decoder" for layer in loaded.spec.layers):
        raise UsageError(
            f"{loaded.name} is encoder-only ({loaded.info.model_type}): it reads its input in one pass and generates "
            "no tokens, so there is no decode step or KV cache to time; `ffncalc flops` counts its forward pass"
        )
    remarks = Remarks()
    tokens = _context(context, loaded, remarks)
    prompt_tokens = parse_context(prompt) if prompt is not None else tokens
    weights = stored_as(loaded, dtype, kv_dtype)
    weight_dtype, scheme, cache_dtype = weights.dtype, weights.scheme, weights.cache_dtype
    quantization = scheme.method if scheme else None
    if store is not None:  # the file's own types, named as llama.cpp names the mix
        weight_dtype, quantization, cache_dtype = "GGUF", store.file_type, store.cache_name
    activations_quantized = scheme is not None and scheme.activation_scale
    matmul_dtype = (
        compute_dtype.lower() if compute_dtype else compute_dtype_for(weight_dtype, quantization, activations_quantized)
    )
    stored = weight_layout(loaded.spec, weights.dtype, scheme)
    estimate: Any = estimate_speed
    if layout.pipeline_parallel > 1:
        from .expected import with_expected as expected_of
        from .roofline import estimate_pipelined

        def stage_expected(report: Any, stage: Any) -> Any:
            return expected_of(report, engine, sublayer_count(stage))

        estimate = partial(
            estimate_pipelined,
            stored_for=lambda stage: weight_layout(stage, weights.dtype, scheme),
            layout=layout,
            expect=stage_expected,
        )
    reports: list[Any] = []
    not_fitting: list[FirstNotFitting] = []
    warnings = list(loaded.info.warnings) + remarks.warnings
    sublayers = sublayer_count(loaded.spec)
    engine = options.engine.lower() if options.engine else None
    for chip in chips:
        if (tensor_parallel > 1 or layout.pipeline_parallel > 1) and chip.interconnect is None:
            fix = "give `gpu_interconnect`" if options.gpu_flops is not None else "it has none in the table"
            raise UsageError(
                f"`tensor_parallel`/`pipeline_parallel` over GPUs needs {chip.name}'s interconnect bandwidth; {fix}"
            )
        figures = gpu_figures(chip, matmul_dtype, compute_efficiency, bandwidth_efficiency)
        first: FirstNotFitting | None = None
        for batch in batch_list:
            at = partial(  # this chip and batch at a context: the report, and a request's steps (--output)
                estimate,
                loaded.spec,
                loaded.info,
                stored=stored,
                weight_dtype=weight_dtype,
                quantization=quantization,
                gpu=figures,
                batch=batch,
                prompt=prompt_tokens,
                kv_dtype=cache_dtype,
                gpus=tensor_parallel,
                attention=attention,
                reserve=RUNTIME_RESERVE,
                store=store,
                **({} if layout.pipeline_parallel > 1 else {"layout": layout}),
            )
            report = at(context=tokens)
            if layout.pipeline_parallel == 1:  # a pipeline's stages have theirs already
                report = with_expected(report, engine, sublayers)
            if options.measured_tpot is not None or options.measured_ttft is not None:
                report = with_measured(report, sublayers, engine, options.measured_tpot, options.measured_ttft)
            if options.output is not None:
                report = with_request(report, options.output, partial(_expected_at, at, engine, sublayers))
                if options.disaggregate is not None:
                    report = _disaggregated(report, loaded.spec, chip, layout, options.disaggregate, cache_dtype)
            fit = Remarks(list(remarks.notes), list(remarks.warnings))
            if not report.fits:
                advice = _split_advice(chip, store)
                fit.warnings.append(f"batch {batch:,}: {_need_words(report)}: it does not fit ({advice})")
                if first is None:
                    first = FirstNotFitting(
                        gpu=chip.name,
                        batch=batch,
                        memory_needed=report.memory_needed,
                        memory_usable=report.memory_usable,
                    )
            reports.append(fit.about(report))
        if first is not None:
            not_fitting.append(first)
            where = "at any batch asked" if first.batch == batch_list[0] else f"from batch {first.batch:,} on"
            warnings.append(
                f"{chip.name}: does not fit {where} (batch {first.batch:,} needs {first.memory_needed / (1 << 30):,.2f} "
                f"GiB per GPU, {first.memory_usable / (1 << 30):,.2f} GiB after the runtime reserve; "
                f"{_split_advice(chip, store)})"
            )
    return SpeedRun(reports=reports, not_fitting=not_fitting, warnings=warnings)


def _disaggregated(report: Any, spec: Any, chip: Any, layout: Any, given: str, cache_dtype: str) -> Any:
    """REPORT with its prefill and decode pools (serving_layout.disaggregation)."""
    from .footprint import kv_cache
    from .serving_layout import disaggregation, parse_disaggregate

    replica = layout.tensor_parallel * layout.pipeline_parallel
    prefill_gpus, decode_gpus = parse_disaggregate(given, replica)
    if chip.scale_out is None:
        raise UsageError(f"`disaggregate` moves the KV cache between nodes: {chip.name} has no scale-out figure")
    request = report.request
    found = disaggregation(
        prefill_gpus, decode_gpus, replica, ttft=report.prefill.seconds,
        decode_seconds=request.seconds - report.prefill.seconds, batch=report.batch,
        kv_bytes=kv_cache(spec, report.prompt, 1, cache_dtype).bytes, scale_out=chip.scale_out,
    )  # fmt: skip
    return replace(report, disaggregation=found)


def _split_advice(chip: Any, store: Any) -> str:
    """What to do when it does not fit: `tensor_parallel` where the chip has an interconnect; a GGUF's partial offload."""
    if store is not None:
        return "memory with `gpu_layers`, or `gpu` alone, says how many layers fit; the rest run from RAM"
    if chip.interconnect is None:
        return f"{chip.name} has no interconnect for `tensor_parallel`: a larger accelerator, or fewer bytes (`dtype`, `kv_dtype`)"
    return "`tensor_parallel` to split it"


def _llamacpp_store(loaded: LoadedModel, options: SpeedOptions) -> Any:
    """A GGUF's tensors and llama.cpp's cache for the roofline (llamacpp.LlamaCppStore), or None for a config;
    the options that do not apply to the one or the other refused."""
    if getattr(loaded, "gguf", None) is None:  # a config.json model: none of GGUF's code imported
        if options.cache_type is not None:
            raise UsageError("`cache_type` applies to a GGUF under llama.cpp; a config's cache is `kv_dtype`")
        return None
    for given, flag in ((options.dtype, "`dtype`"), (options.kv_dtype, "`kv_dtype`")):
        if given is not None:
            raise UsageError(f"{flag} does not apply to a GGUF: its weights are the file's; the cache is `cache_type`")
    if options.expert_parallel != 1 or options.dp_attention or options.pipeline_parallel != 1:
        raise UsageError(
            "`expert_parallel`, `pipeline_parallel` and `dp_attention` do not apply to a GGUF: llama.cpp runs it on one device here"
        )
    if options.tensor_parallel != 1:
        raise UsageError(
            "`tensor_parallel` does not apply to a GGUF: llama.cpp splits a model over GPUs by layers, which run one after "
            "another; speed counts one device"
        )
    from .ggml import gguf_weights
    from .llamacpp import LlamaCppStore

    gguf = getattr(loaded, "gguf")  # noqa: B009 (a GgufModel's; the class is not imported for a config)
    return LlamaCppStore(gguf, options.cache_type or "f16", file_type=gguf_weights(gguf, 0).file_type)


def _need_words(report: Any) -> str:
    """What a speed report needs per GPU against what its accelerator has after the runtime reserve."""
    if report.weight_dtype == "GGUF":
        return (
            f"llama.cpp's weights + KV cache + compute buffer (assumed) need {report.memory_needed / (1 << 30):,.2f} "
            f"GiB on the GPU, more than {report.gpu.name}'s {report.memory_usable / (1 << 30):,.2f} GiB usable"
        )
    return (
        f"weights + KV cache + activations need {report.memory_needed / (1 << 30):,.2f} GiB per GPU, more than "
        f"{report.gpu.name}'s {report.memory_usable / (1 << 30):,.2f} GiB after a "
        f"{report.runtime_reserve / (1 << 30):,.2f} GiB runtime reserve"
    )


def _expected_at(estimate: Any, engine: str | None, sublayers: int, context: int) -> Any:
    """ESTIMATE's report at CONTEXT with its expected figures: one decode step of a request's generation."""
    from .expected import with_expected

    report = estimate(context=context)
    return report if report.pipeline is not None else with_expected(report, engine, sublayers)


MAX_BATCH = 1 << 20


MAX_BATCHES = 64  # batches in one run: a sweep of more is a typo, not a study (each is a whole estimate per chip)


def _batches(batches: str | tuple[int, ...] | list[int]) -> list[int]:
    """'1,8,64', '1:256:x2' (doubling) or '8:64:8' (as `sweeps` writes ranges) → [1, 8, 64]; each a whole number
    from 1 to MAX_BATCH, ascending, no repeats, at most MAX_BATCHES of them."""
    from .overrides import parse_sweep

    if isinstance(batches, str) and ":" in batches:
        try:
            items = [str(value) for value in parse_sweep(f"batch={batches.strip()}").values]
        except UsageError as error:
            raise UsageError(str(error).replace("`sweeps` 'batch=", "`batches` '")) from None
    else:
        items = batches.split(",") if isinstance(batches, str) else [str(b) for b in batches]
    values = []
    for item in items:
        text = item.strip()
        if not text.isdigit() or not 1 <= int(text) <= MAX_BATCH:
            raise UsageError(
                f"`batches` takes whole numbers from 1 to {MAX_BATCH:,}, e.g. 1,8,64 or 1:256:x2 (got {item.strip()[:20]!r})"
            )
        values.append(int(text))
    if len(set(values)) > MAX_BATCHES:
        raise UsageError(f"`batches` names {len(set(values)):,} batches; at most {MAX_BATCHES}")
    return sorted(set(values))


MAX_GPUS = 1 << 24  # the most GPUs a job may have (--gpus), and so the most --days may ask for
DEFAULT_TOKENS = 10**12  # a run of 1T tokens when neither tokens nor a compute budget is given
MIN_MEASURED_MFU = 1e-6


class TrainOptions(Value):
    """What `train` estimates: the run (tokens, sequence length), the hardware and the assumptions about it."""

    tokens: int | str | None = None  # 15T, 300B, 2e12 (decimal); None: what `compute` buys, else DEFAULT_TOKENS
    seq: int | str = 8192  # tokens per sequence: 8192 or "8k" (k = 1024)
    gpu: str = "h100"
    gpus: int = 1
    compute_dtype: str = "bf16"  # the matmuls' dtype: which dense peak
    mfu: float | None = None  # None: DEFAULT_MFU, assumed (or the measured run's, with measured_tokens_per_second)
    price: float | None = None  # per GPU-hour
    days: float | None = None  # the inverse: the GPUs needed to finish in this many days
    recompute: str = "none"
    zero_stage: int = 1
    measured_tokens_per_second: float | None = None
    per_gpu: bool = False  # measured_tokens_per_second is per GPU
    compute: float | None = None  # compute-optimal for this budget instead of the run's
    tensor_parallel: int = 1  # ranks each matrix is split across; the data-parallel ranks are gpus ÷ tensor_parallel
    sequence_parallel: bool = False  # Megatron's sequence parallelism across the tensor-parallel ranks
    micro_batch: int = 1  # sequences per GPU per forward: what activations are stored for
    global_batch: int | None = None  # sequences per optimizer step; None: micro_batch × data-parallel ranks
    pipeline_parallel: int = 1  # pipeline stages (--pp)
    context_parallel: int = 1  # ranks each sequence is split across (--cp)
    expert_parallel: int = 1  # ranks the routed experts are split across, carved out of dp × cp (--ep)
    data_parallel: int | None = None  # None: gpus ÷ (tp · pp · cp)
    virtual_stages: int = 1  # model chunks per pipeline rank, interleaved 1F1B (--vpp)
    plan: bool = False  # rank every layout of --gpus that fits, by expected tokens/s per GPU
    recompute_modules: tuple[str, ...] = ()  # with recompute "selective": Megatron-LM's modules (layouts)

    def checked(self) -> TrainOptions:
        """These options, or a UsageError naming the first that cannot be used (before any download)."""
        from .training import parse_tokens

        if self.tokens is not None:
            parse_tokens(self.tokens)
        parse_context(self.seq)
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) or not 1 <= self.gpus <= MAX_GPUS:
            raise UsageError(f"`gpus` must be a whole number from 1 to {MAX_GPUS:,} (got {self.gpus})")
        if self.mfu is not None and not 0 < self.mfu <= 1:
            raise UsageError(f"`mfu` must be above 0 and at most 1, e.g. 0.4 (got {self.mfu})")
        for name, value in (("`price`", self.price), ("`days`", self.days), ("`compute`", self.compute)):
            if value is not None and not (0 < value < float("inf")):
                raise UsageError(f"{name} must be a positive number (got {value})")
        if self.measured_tokens_per_second is not None and not 0 < self.measured_tokens_per_second < float("inf"):
            raise UsageError(
                f"`measured_tokens_per_second` must be a positive number (got {self.measured_tokens_per_second})"
            )
        if self.per_gpu and self.measured_tokens_per_second is None:
            raise UsageError("`per_gpu` says how `measured_tokens_per_second` was counted; add it")
        if self.recompute not in ("none", "selective", "full"):
            raise UsageError(f"`recompute` must be none, selective or full (got {self.recompute!r})")
        if self.zero_stage not in (0, 1, 2, 3):
            raise UsageError(f"`zero_stage` must be 0, 1, 2 or 3 (got {self.zero_stage})")
        if self.days is not None and self.gpus != 1:
            raise UsageError("`days` finds the number of GPUs; give `days` or `gpus`, not both")
        for name, number in (
            ("`tensor_parallel`", self.tensor_parallel),
            ("`micro_batch`", self.micro_batch),
            ("`global_batch`", self.global_batch),
            ("`pipeline_parallel`", self.pipeline_parallel),
            ("`context_parallel`", self.context_parallel),
            ("`expert_parallel`", self.expert_parallel),
            ("`data_parallel`", self.data_parallel),
            ("`virtual_stages`", self.virtual_stages),
        ):
            if number is not None and (not isinstance(number, int) or isinstance(number, bool) or number < 1):
                raise UsageError(f"{name} must be a whole number of at least 1 (got {number})")
        model = self.tensor_parallel * self.pipeline_parallel * self.context_parallel
        if self.days is None and self.gpus % model and not self.plan:
            raise UsageError(
                f"`gpus` {self.gpus} is not a multiple of `tensor_parallel` × `pipeline_parallel` × `context_parallel` ({model}): data-parallel ranks are "
                "`gpus` ÷ (`tensor_parallel` × `pipeline_parallel` × `context_parallel`)"
            )
        if self.data_parallel is not None and self.days is None and model * self.data_parallel != self.gpus:
            raise UsageError(
                f"`tensor_parallel` × `pipeline_parallel` × `context_parallel` × `data_parallel` is {model * self.data_parallel:,}, not `gpus` {self.gpus:,}; leave out "
                "`data_parallel` to derive it"
            )
        if self.plan and (self.days is not None or self.gpus < 2):
            raise UsageError("`plan` searches the layouts of a job; give its `gpus` (2 or more), not `days`")
        if self.sequence_parallel and self.tensor_parallel < 2:
            raise UsageError(
                "`sequence_parallel` splits activations across tensor-parallel ranks; add `tensor_parallel` 2 or more"
            )
        return self


def train(model: str | LoadedModel, options: TrainOptions | None = None, **changes: Any) -> TrainReport:
    """What training MODEL on OPTIONS.tokens costs: FLOPs, GPU-hours, days and cost at an assumed MFU; the MFU of
    a measured run as each framework counts FLOPs; the compute-optimal size; training memory per GPU."""
    import math
    from fractions import Fraction

    from .accelerators import DTYPES, accelerator
    from .compute import count_flops
    from .footprint import training_memory, weight_layout
    from .training import (
        CONVENTION_NOTES,
        CONVENTIONS,
        DEFAULT_MFU,
        HOURS_PER_DAY,
        Batch,
        ComputeOptimalReport,
        Convention,
        Memory,
        TrainReport,
        chinchilla_20,
        chinchilla_approach_3,
        gpu_hours,
        megatron_flops_per_token,
        mfu_of,
        nanogpt_flops_per_token,
        palm_flops_per_token,
        parse_tokens,
        peer_shape,
        scaled,
        torchtitan_flops_per_token,
        total_components,
    )

    options = replace(options or TrainOptions(), **changes).checked()
    dtype = options.compute_dtype.lower()
    if dtype not in DTYPES:
        raise UsageError(f"`compute_dtype` {options.compute_dtype!r}: use one of {', '.join(DTYPES)}")
    chip = accelerator(options.gpu)
    peak = chip.peak(dtype)
    if peak is None:
        raise UsageError(f"{chip.name} has no {dtype} units; use `compute_dtype` bf16")
    seq = parse_context(options.seq)
    loaded = _load(model)
    info, remarks = loaded.info, Remarks()
    if options.tokens is not None:
        tokens = parse_tokens(options.tokens)
    elif options.compute is not None:
        # A budget without a run: the run is the budget spent on this model, the tokens it buys (ffncalc's exact
        # FLOPs per token at this sequence length), so the time, cost and memory answer the question asked.
        per_token = Fraction(count_flops(loaded.spec, seq, info).training, seq)
        tokens = max(1, math.floor(Fraction(round(options.compute)) / per_token))
        remarks.notes.append(
            f"no number of tokens given: the run is the {options.compute:.4g}-FLOP budget spent on this model, "
            f"{tokens:,} tokens at its exact FLOPs per token"
        )
    else:
        tokens = DEFAULT_TOKENS
        remarks.notes.append(f"no number of tokens given: {tokens:,} assumed")
    limit = loaded.config.max_context()
    if limit is not None and seq > limit:
        remarks.warnings.append(
            f"`seq` {seq:,} exceeds this config's {loaded.config.context_field} ({limit:,}); counted anyway"
        )
    from .parallel import check_tensor_parallel

    check_tensor_parallel(loaded.spec, options.tensor_parallel, "training")
    flops = count_flops(loaded.spec, seq, info)
    forward = flops.prefill
    per_sequence = flops.training
    total = scaled(per_sequence, tokens, seq)
    from .layouts import ParallelLayout, check_recompute_modules
    from .layouts import recompute_flops as layout_recompute_flops

    check_recompute_modules(loaded.spec, options.recompute, options.recompute_modules)
    recomputed = ParallelLayout(recompute=options.recompute, recompute_modules=options.recompute_modules)  # type: ignore[arg-type]
    hardware = total + scaled(
        layout_recompute_flops(loaded.spec, seq, forward.total, forward.attention_scores, recomputed), tokens, seq
    )
    params_report = account(loaded)
    active = params_report.active_params or params_report.language_model_params
    shape = peer_shape(loaded.spec, active, params_report.components.embedding)

    measured = options.measured_tokens_per_second
    gpus = options.gpus
    mfu, assumed = (options.mfu or DEFAULT_MFU), True  # given or the default, an assumption
    hours = gpu_hours(total, mfu, peak)
    tp = options.tensor_parallel
    model_ranks = tp * options.pipeline_parallel * options.context_parallel
    if options.days is not None:  # whole model replicas (tp · pp · cp GPUs each)
        needed = math.ceil(hours / (options.days * HOURS_PER_DAY) / model_ranks) * model_ranks
        if needed > MAX_GPUS:
            raise UsageError(
                f"finishing in {options.days:g} days needs {needed:,.3g} GPUs at an MFU of {mfu:g}, more than any "
                f"job ffncalc models ({MAX_GPUS:,}); allow more days"
            )
        gpus = max(model_ranks, needed)
    data_parallel = gpus // model_ranks
    per_step = options.micro_batch * data_parallel
    global_batch = options.global_batch or per_step
    if options.plan and options.global_batch is None:
        raise UsageError("`plan` compares layouts at one batch: give `global_batch` (sequences per optimizer step)")
    if global_batch % per_step and not options.plan:
        raise UsageError(
            f"`global_batch` {global_batch:,} is not a multiple of `micro_batch` × data-parallel ranks "
            f"({options.micro_batch} × {data_parallel:,} = {per_step:,})"
        )
    job_rate = None if measured is None else measured * (gpus if options.per_gpu else 1)
    exact_per_token = Fraction(per_sequence, seq)
    if job_rate is not None:
        measured_mfu = mfu_of(float(exact_per_token), job_rate, gpus, peak)
        # A rate past the chips' peak is no measurement of this model on them; one under a millionth of it would
        # take longer than any run (a miscounted unit either way).
        if not MIN_MEASURED_MFU <= measured_mfu <= 1:
            unit = "per GPU (`per_gpu`)" if options.per_gpu else "for the whole job of `gpus`"
            raise UsageError(
                f"{job_rate:,.4g} tokens/s {unit} would be an MFU of {measured_mfu:,.4g} on {gpus:,} × {chip.name} "
                f"(dense {dtype}): a measured rate must give an MFU above {MIN_MEASURED_MFU:g} and at most 1; check "
                "the rate, `gpus`, `per_gpu` and `compute_dtype`"
            )
        if options.mfu is None:  # the measured run's own MFU sets the time and cost
            mfu, assumed = measured_mfu, False
            hours = gpu_hours(total, mfu, peak)
    fixed_forward = flops_profile_fixed(loaded.spec)
    peers = {
        "ffncalc": ("ffncalc compute.count_flops", exact_per_token),
        "megatron": (
            "NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations @ d98e8a64",
            megatron_flops_per_token(fixed_forward, shape, seq),
        ),
        "torchtitan": (
            "pytorch/torchtitan torchtitan/models/utils.py get_*_model_nparams_and_flops @ b5bcd76c",
            Fraction(torchtitan_flops_per_token(shape, seq)),
        ),
        "palm": ("PaLM (Chowdhery et al. 2022) appendix B", Fraction(palm_flops_per_token(shape, seq))),
        "nanogpt": ("karpathy/nanoGPT model.py estimate_mfu @ 04a1d697", Fraction(nanogpt_flops_per_token(shape, seq))),
    }
    conventions = [
        Convention(
            name=name,
            source=source,
            flops_per_token=round(value),
            ratio_to_exact=float(value / exact_per_token),
            mfu=None if job_rate is None else mfu_of(float(value), job_rate, gpus, peak),
            note=CONVENTION_NOTES[name],
        )
        for name, (source, value) in peers.items()
    ]
    hfu = None if job_rate is None else mfu_of(float(Fraction(hardware, tokens)), job_rate, gpus, peak)

    budget = total if options.compute is None else round(options.compute)
    compute_optimal = ComputeOptimalReport(
        compute=budget,
        compute_source="this run's total model FLOPs" if options.compute is None else "`compute`",
        rules=[chinchilla_20(budget), chinchilla_approach_3(budget)],
        tokens_per_param=tokens / active,
        times_past_20=tokens / active / 20,
    )
    if options.zero_stage == 3 and data_parallel * options.context_parallel == 1 and not options.plan:
        raise UsageError(
            "`zero_stage` 3 on one data-parallel rank shards nothing; give `gpus` 2 or more, or `zero_stage` 0"
        )
    layout_figures = _train_layout(loaded, options, chip, dtype, seq, gpus, global_batch, flops)
    # Full training in 16-bit mixed precision, as `memory --train` counts it (footprint.training_memory), without the
    # inference figures memory() would add.
    training = training_memory(
        loaded.spec,
        weight_layout(loaded.spec, "BF16", None),
        seq,
        options.micro_batch,
        "adamw",
        options.recompute,  # type: ignore[arg-type]
        data_parallel,
        options.zero_stage,
        tensor_parallel=tp,
        sequence_parallel=options.sequence_parallel,
    )
    # One answer: the memory per GPU is the layout's busiest rank (layouts.rank_memory, as `memory --train` counts
    # it); with --plan the best layout's, or where none fits the best-looking one's that does not.
    rejected = layout_figures.get("rejected") or []
    if layout_figures.get("layout_report") is not None:
        per_gpu = layout_figures["per_gpu_bytes"]
    elif rejected:
        per_gpu = rejected[0].per_gpu_bytes
    else:  # --plan found no layout of these GPUs at all
        per_gpu = training.per_gpu
    # The batch as the layout runs it: the stated one, or with --plan the best layout's (else the stated options').
    best = layout_figures.get("layout_report")
    batch_layout = ParallelLayout(
        tp=tp, dp=data_parallel, micro_batch=options.micro_batch, global_batch=global_batch,
        sequence_parallel=options.sequence_parallel,
    )  # fmt: skip
    if best is not None:
        batch_layout = ParallelLayout(
            tp=best.layout["tp"], dp=best.layout["dp"], micro_batch=best.layout["micro_batch"],
            global_batch=best.layout["global_batch"], sequence_parallel=best.sequence_parallel,
        )  # fmt: skip
    if per_gpu > chip.memory and not options.plan:
        remarks.warnings.append(
            f"training memory is {per_gpu / (1 << 30):,.1f} GiB per GPU at ZeRO stage {options.zero_stage}, more than "
            f"{chip.name}'s {chip.memory / (1 << 30):,.1f} GiB: it does not fit (`zero_stage` 3, `recompute` full, or "
            "more `gpus`)"
        )
    report = TrainReport(
        **field_values(info),
        tokens=tokens,
        seq=seq,
        params=active,
        flops_per_sequence=per_sequence,
        flops_per_token=round(exact_per_token),
        total_flops=total,
        components=total_components(field_values(forward), tokens, seq),
        recompute=options.recompute,  # type: ignore[arg-type]
        hardware_flops=hardware,
        gpu=chip.name,
        dtype=dtype,
        peak_flops=peak,
        gpus=gpus,
        mfu=mfu,
        mfu_assumed=assumed,
        gpu_hours=hours,
        days=hours / gpus / HOURS_PER_DAY,
        price=options.price,
        cost=None if options.price is None else hours * options.price,
        batch=Batch(
            micro_batch=batch_layout.micro_batch,
            data_parallel=batch_layout.dp,
            tensor_parallel=batch_layout.tp,
            sequence_parallel=batch_layout.sequence_parallel,
            accumulation_steps=batch_layout.micro_batches,
            global_batch=global_batch,
            tokens_per_step=global_batch * seq,
            steps=-(-tokens // (global_batch * seq)),
        ),
        memory=Memory(
            per_gpu=per_gpu,
            gpu_memory=chip.memory,
            fits=per_gpu <= chip.memory,
            zero_stage=options.zero_stage,
            formula=training.activations_formula,
        ),
        measured_tokens_per_second=job_rate,
        hfu=hfu,
        mfu_by_convention={convention.name: convention.mfu for convention in conventions},
        flops_per_token_by_convention=conventions,
        compute_optimal=compute_optimal,
        conventions=CONVENTIONS + flops.conventions + layout_figures.pop("conventions"),
        **layout_figures,
    )
    return remarks.about(report)


def _train_layout(
    loaded: LoadedModel,
    options: TrainOptions,
    chip: Any,
    dtype: str,
    seq: int,
    gpus: int,
    global_batch: int,
    flops: Any,
) -> dict[str, Any]:
    """The layout figures of `train` (layouts.evaluate), or with `plan` every layout of the job ranked."""
    from . import layouts

    forward = flops.prefill
    recomputed = layouts.ParallelLayout(recompute=options.recompute, recompute_modules=options.recompute_modules)  # type: ignore[arg-type]
    recompute = layouts.recompute_flops(loaded.spec, seq, forward.total, forward.attention_scores, recomputed)
    figures = dict(
        model_flops_per_sequence=flops.training,
        hardware_flops_per_sequence=flops.training + recompute,
        lm_head_flops_per_sequence=3 * forward.lm_head,
        attention_flops_per_sequence=3 * forward.attention_scores,
    )
    if options.plan:
        plan = layouts.plan(
            loaded.spec, seq, chip, dtype, gpus, global_batch=options.global_batch, zero_stage=options.zero_stage,
            recompute=options.recompute, recompute_modules=options.recompute_modules, **figures,
        )  # fmt: skip
        best = plan.layouts[0] if plan.layouts else None
        out = _layout_keys(best)
        out.update(layouts=plan.layouts, rejected=plan.rejected, plan_limits=plan.limits)
        out["conventions"] = layouts.LAYOUT_CONVENTIONS
        return out
    layout = layouts.training_layout(
        loaded.spec,
        seq,
        gpus,
        tp=options.tensor_parallel,
        pp=options.pipeline_parallel,
        cp=options.context_parallel,
        ep=options.expert_parallel,
        vpp=options.virtual_stages,
        micro_batch=options.micro_batch,
        global_batch=global_batch,
        sequence_parallel=options.sequence_parallel,
        zero_stage=options.zero_stage,
        recompute=options.recompute,
        recompute_modules=options.recompute_modules,
    )
    report = layouts.evaluate(loaded.spec, layout, seq, chip, dtype, **figures)
    out = _layout_keys(report)
    out["conventions"] = layouts.LAYOUT_CONVENTIONS
    return out


def _layout_keys(report: Any) -> dict[str, Any]:
    """The train report's top-level layout keys, from a layouts.LayoutReport (None: all None)."""
    if report is None:
        return dict(layout_report=None)
    return dict(
        layout=report.layout,
        per_gpu_bytes=report.per_gpu_bytes,
        fits=report.fits,
        communication=report.communication,
        bubble_fraction=report.bubble_fraction,
        expected_step_seconds=report.expected_step_seconds,
        expected_tokens_per_second_per_gpu=report.expected_tokens_per_second_per_gpu,
        expected_mfu=report.expected_mfu,
        layout_report=report,
    )


def flops_profile_fixed(spec: Any) -> int:
    """The forward matmul FLOPs one token costs whatever the context (compute.flops_profile's fixed part)."""
    from .compute import flops_profile

    return flops_profile(spec).fixed
