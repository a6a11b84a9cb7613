"""The speed engine: roofline ceilings of decode and prefill on each accelerator (roofline.py), with the expected
time beside each (expected.py), serving layouts (serving_layout.py), a GGUF under llama.cpp, and a whole request;
assembled from SpeedOptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..loading import LoadedModel
from ..results import Remarks
from ..units import parse_context
from ..values import Value, replace
from .inputs import (
    cache_element_type,
    check_quantization,
    check_types,
    context_of,
    engine_door,
    loaded_model,
    stored_as,
)

if TYPE_CHECKING:
    from ..accelerators import Accelerator
    from ..roofline import SpeedRun

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
    quant_group_size: int | None = None  # `dtype` int4: inputs per group (GPTQ layout; None: 128)
    quantize_head: bool = False  # a quantized `dtype`: the output head quantized too (False: it stays BF16)
    compute_dtype: str | None = None  # the matmuls' dtype (default: the weights')
    compute_efficiency: float = 1.0
    bandwidth_efficiency: float = 1.0
    attention: str = "flash"  # "flash" (FlashAttention-style: no score matrix in memory) or "eager"
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
    price: float | None = None  # per GPU-hour: cost per million input and output tokens at the expected throughput
    runtime_reserve: str | None = None  # memory the runtime keeps on each GPU, e.g. "2GiB"; None: RUNTIME_RESERVE

    @property
    def profile_name(self) -> str | None:
        """The engine whose profile answers: `engine` as memory's `engine` spells it (vllm, vllm@0.11, sglang, none …)
        less any version (one profile an engine, fitted on the versions it states); None for none or no engine."""
        if self.engine is None:
            return None
        name = self.engine.strip().lower().partition("@")[0]
        return None if name == "none" else name

    def checked(self) -> SpeedOptions:
        """These options, or a UsageError naming the first that cannot be estimated (before any download)."""
        check_types(self)
        described = (self.gpu_memory, self.gpu_interconnect, self.gpu_name)
        if any(value is not None for value in described) and self.gpu_flops is None:
            raise UsageError(
                "`gpu_memory`, `gpu_interconnect` and `gpu_name` describe a chip given by `gpu_flops`; add it"
            )
        from ..accelerators import DTYPES
        from ..expected import ENGINES

        if self.engine is not None and self.profile_name not in (*ENGINES, None):
            raise UsageError(
                f"`engine` {self.engine[:20]!r} has no profile; use one of {', '.join(ENGINES)} "
                "(or none, or leave it out, for the typical profile)"
            )
        for text in (self.context, self.prompt):
            if text is not None:
                parse_context(text)
        check_quantization(self.dtype, self.quant_group_size, self.quantize_head)
        batches_of(self.batches)
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
        if self.attention not in ("flash", "eager"):
            raise UsageError(f"`attention` must be flash or eager (got {self.attention!r})")
        if self.compute_dtype is not None and self.compute_dtype.lower() not in DTYPES:
            raise UsageError(f"`compute_dtype` {self.compute_dtype!r}: use one of {', '.join(DTYPES)}")
        if self.kv_dtype is not None:
            cache_element_type(self.kv_dtype, "`kv_dtype`")
        if self.cache_type is not None:
            from ..llamacpp import CACHE_TYPES

            if self.cache_type.lower() not in CACHE_TYPES:
                raise UsageError(
                    f"`cache_type` {self.cache_type[:20]!r}: use one of llama.cpp's cache types: {', '.join(CACHE_TYPES)}"
                )
        for flag, measured in (("`measured_tpot`", self.measured_tpot), ("`measured_ttft`", self.measured_ttft)):
            if measured is not None and not 0 < measured < float("inf"):
                raise UsageError(f"{flag} must be a positive time in milliseconds, e.g. 6.5 (got {measured * 1000:g})")
        if self.price is not None and not 0 < self.price < float("inf"):
            raise UsageError(f"`price` must be a positive amount per GPU-hour, e.g. 2.5 (got {self.price})")
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
        from ..accelerators import Accelerator, accelerator, memory_of

        if self.gpu_flops is not None and self.gpu_bandwidth is not None:
            memory_bytes = memory_of(self.gpu_memory) if self.gpu_memory is not None else 1 << 50
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


@engine_door
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

    from ..accelerators import reserve_of
    from ..expected import with_cost_and_energy, with_expected, with_measured, with_request
    from ..footprint import stage_weight_layout, weight_layout
    from ..roofline import FirstNotFitting, SpeedRun, compute_dtype_for, estimate_speed, gpu_figures, sublayer_count

    options = replace(options or SpeedOptions(), **changes)
    if accelerators is not None:
        options = replace(options, accelerators=accelerators)
    options.checked()
    reserve = reserve_of(options.runtime_reserve)
    chips = options.chips()
    batch_list = batches_of(options.batches)
    context, prompt, dtype, kv_dtype = options.context, options.prompt, options.dtype, options.kv_dtype
    compute_dtype, tensor_parallel, attention = options.compute_dtype, options.tensor_parallel, options.attention
    compute_efficiency, bandwidth_efficiency = options.compute_efficiency, options.bandwidth_efficiency
    loaded = loaded_model(model)
    from ..parallel import check_tensor_parallel

    store = _llamacpp_store(loaded, options)
    check_tensor_parallel(loaded.spec, tensor_parallel, "serving")
    from ..serving_layout import ServingLayout, check_layout

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
    tokens = context_of(context, loaded, remarks)
    prompt_tokens = parse_context(prompt) if prompt is not None else tokens
    weights = stored_as(loaded, dtype, kv_dtype, options.quant_group_size, options.quantize_head)
    remarks.notes += weights.notes  # what a quantized `dtype` assumes, said as `memory` says it
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
        from ..expected import with_expected as expected_of
        from ..roofline import estimate_pipelined

        def stage_expected(report: Any, stage: Any) -> Any:
            return expected_of(report, engine, sublayer_count(stage))

        estimate = partial(
            estimate_pipelined,
            stored_for=lambda stage, first, last: stage_weight_layout(stage, weights.dtype, scheme, first, last),
            layout=layout,
            expect=stage_expected,
        )
    reports: list[Any] = []
    not_fitting: list[FirstNotFitting] = []
    warnings = list(loaded.info.warnings) + remarks.warnings
    sublayers = sublayer_count(loaded.spec)
    engine = options.profile_name
    for chip in chips:
        if (tensor_parallel > 1 or layout.pipeline_parallel > 1) and chip.interconnect is None:
            fix = "give `gpu_interconnect`" if options.gpu_flops is not None else "it has none in the table"
            raise UsageError(
                f"`tensor_parallel`/`pipeline_parallel` over GPUs needs {chip.name}'s interconnect bandwidth; {fix}"
            )
        figures = gpu_figures(chip, matmul_dtype, compute_efficiency, bandwidth_efficiency)
        chip_notes = []  # this chip's own, beside the model's
        if tensor_parallel > chip.nvlink_domain:
            domains = (
                f"`tensor_parallel` {tensor_parallel} spans {-(-tensor_parallel // chip.nvlink_domain)} domains of "
            )
            chip_notes.append(
                f"{chip.name}: {domains}{chip.nvlink_domain} GPUs joined by its {chip.interconnect_name}: its "
                f"all-reduces and all-to-alls cross the scale-out network, {chip.scale_out * 8 / 1e9:,.0f} Gb/s a GPU "
                "(the ceiling times them there)."
                if chip.scale_out is not None
                else f"{chip.name}: {domains}{chip.nvlink_domain} GPUs, but the accelerator table has no scale-out "
                "figure for it: its collectives are timed at the interconnect's rate, which the network between "
                "nodes does not reach (an optimistic ceiling)."
            )
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
                reserve=reserve,
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
            power = chip.board_power_source or "no figure: a chip described by `gpu_flops` has no board power"
            report = with_cost_and_energy(report, chip.board_power, power, options.price)
            assert report.memory_usable is not None  # estimate_speed sets it on every report
            fit = Remarks([*remarks.notes, *chip_notes], list(remarks.warnings))
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
    from ..footprint import kv_cache
    from ..serving_layout import disaggregation, parse_disaggregate

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
    from ..ggml import gguf_weights
    from ..llamacpp import LlamaCppStore

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
    from ..expected import with_expected

    report = estimate(context=context)
    return report if report.pipeline is not None else with_expected(report, engine, sublayers)


MAX_BATCH = 1 << 20


MAX_BATCHES = 64  # batches in one run: a sweep of more is a typo, not a study (each is a whole estimate per chip)


def batches_of(batches: str | tuple[int, ...] | list[int]) -> list[int]:
    """'1,8,64', '1:256:x2' (doubling) or '8:64:8' (as `sweeps` writes ranges) → [1, 8, 64]; each a whole number
    from 1 to MAX_BATCH, ascending, no repeats, at most MAX_BATCHES of them."""
    from ..overrides import parse_sweep

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
