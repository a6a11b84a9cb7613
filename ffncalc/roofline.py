"""How fast a model runs on an accelerator: a roofline over ffncalc's exact FLOPs and bytes. Pure arithmetic.

Every figure is a ROOFLINE CEILING, not a measurement: each operator takes max(FLOPs ÷ peak, bytes ÷ bandwidth)
and a step is the sum over its operators. The FLOPs are `flops`'s (ffncalc.compute), the weight bytes `memory`'s
stored layout (ffncalc.footprint.weight_layout: dtype and quantization as the checkpoint stores them), the KV bytes
`memory`'s cache (windows, MLA latent, hybrid state); nothing here re-derives them. CONVENTIONS lists the rest.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

from .accelerators import RUNTIME_RESERVE_SOURCE, Accelerator
from .compute import (
    ContextProfile,
    causal_keys,
    first_token_flops,
    flops_profile,
    generating_layers,
    per_token_flops,
    prefill_flops,
)
from .footprint import (
    PREFILL_CHUNK,
    Layout,
    activation_size,
    cache_shares,
    inference_activations,
    inference_need,
    kv_cache,
    kv_elements_per_token,
    per_gpu_cache,
)
from .results import ModelInfo, Result
from .serving_layout import CONVENTIONS as LAYOUT_CONVENTIONS
from .serving_layout import (
    PIPELINE_CONVENTION,
    Disaggregation,
    ServingLayout,
    all_to_all_bytes,
    allreduce_bytes,
    batch_share,
    routed_expert_bytes,
)
from .spec import ModelSpec, MoeFfn
from .tensors import lm_head_rows
from .units import DTYPE_BYTES
from .values import field_values

Bound = Literal["compute", "memory"]
AttentionKernel = Literal["flash", "eager"]  # as memory names them: flash keeps no score matrix
ACTIVATION_BYTES = 2  # activations and logits in 16-bit, as serving engines keep them

OPERATORS = ("attention_projections", "attention_scores", "ffn", "mixers", "lm_head", "embedding", "other")
LABELS = {
    "attention_projections": "Attention projections",
    "attention_scores": "Attention scores / KV",
    "ffn": "FFN",
    "mixers": "Mixers (state)",
    "lm_head": "Output head",
    "embedding": "Embedding rows",
    "other": "Norms and other",
}

CONVENTIONS = [
    "roofline ceiling: each operator takes max(FLOPs ÷ peak, bytes ÷ bandwidth) at the stated efficiencies; a step "
    "is the sum over its operators (no overlap between operators, no launch or scheduling overhead)",
    "FLOPs as `ffncalc flops` counts them (2 per multiply-add, matmuls only); bytes moved: weights as stored (dtype "
    "and quantization scales, as `ffncalc memory` counts them), the KV cache and recurrent state as `memory` counts "
    "them, and activations",
    "decode: one new token for each sequence of the batch at the context; every dense weight is read once per step "
    "whatever the batch; an MoE layer reads the expected distinct experts under uniform routing, E·(1 − (1 − k/E)^B), "
    "and its shared experts; the embedding reads the batch's rows, the output head its whole matrix",
    "prefill: one prompt of the prompt's tokens (time to first token); the output head runs for the last position only, "
    "as serving engines do; causal attention as `flops` counts it; an encoder-decoder's prompt is its encoder's "
    "input: the encoder reads it once and the decoder runs its start token over it (cross-attention to every "
    "encoder position)",
    "attention flash (FlashAttention-style) by default: scores never reach memory, the kernel reads Q, K, V and writes "
    "the output; eager attention also writes and reads the score matrix (16-bit)",
    "KV cache: read whole at each decode step (sliding layers their window), each layer writes the new token's entry; "
    "a mixer reads and writes its recurrent state once per step",
    "activations: every operator reads its input and writes its output once per layer, tokens × hidden_size 16-bit "
    "elements each way; the head writes tokens × vocab logits",
    "MLA: decode in the weight-absorbed form (scores over the latent, as inference engines run it), prefill in the "
    "plain form (keys and values up-projected)",
    "tensor parallelism over N: FLOPs and matrices split by N, vectors and routers copied, the KV cache as `memory` "
    "splits it; 2 all-reduces per layer (after attention and after the FFN or mixer), each moving "
    "2·(N−1)/N × tokens × hidden × 2 bytes over the interconnect (per direction)",
    "matmuls run at the peak of the weights' dtype (FP8 checkpoints on FP8 peaks, NVFP4 checkpoints with 4-bit "
    "activations on FP4 peaks, integer weights (GPTQ, AWQ, bitsandbytes, quantized GGUF) on INT8 peaks as the "
    "fastest engines run them, where the chip has them; other 16-bit activations on BF16) unless "
    "another compute dtype is asked; a chip without the unit runs at its BF16 peak, and its notes say so",
    f"fits: after the runtime reserve on each GPU, {RUNTIME_RESERVE_SOURCE} (`runtime_reserve` to set it)",
]


# --- results ----------------------------------------------------------------------------------------


class OperatorTime(Result):
    """One operator (a component summed over its layers): its FLOPs, bytes, roofline time and what bounds it."""

    name: str  # one of OPERATORS
    flops: int
    bytes: int
    compute_seconds: float
    memory_seconds: float
    seconds: float  # max of the two
    bound: Bound
    intensity: float | None  # FLOPs per byte; None when nothing is moved


class Phase(Result):
    """A decode step or a prefill: operators, totals, the all-reduce, and the time (sum of operator times)."""

    tokens: int  # tokens the step processes: the batch (decode) or the prompt (prefill)
    flops: int
    bytes: int
    components: list[OperatorTime]
    allreduce_bytes: int  # per GPU, per direction; 0 without tensor parallelism
    allreduce_seconds: float
    seconds: float  # Σ component seconds + all-reduce seconds + all-to-all seconds
    bound: Bound  # what bounds most of the time
    all_to_all_bytes: int = 0  # per GPU sent: MoE dispatch + combine under expert parallelism
    all_to_all_seconds: float = 0.0  # over the interconnect
    expert_runs: float = 0.0  # per GPU: routed experts run, over the MoE layers (no time of the ceiling's)


class Attainment(Result):
    """A MEASURED time (the user's, cited by them) beside the ceiling and the expected figure."""

    measured_seconds: float
    attainment: float  # ceiling ÷ measured: the share of the roofline's speed reached (MBU when memory-bound)
    expected_over_measured: float
    largest_gap: str  # the modelled term that adds most above the ceiling
    gap_seconds: dict[str, float]  # what each modelled term adds above the ceiling (ffncalc.expected)


class DecodeStep(Phase):
    seconds_per_step: float  # time per output token (TPOT)
    tokens_per_second: float  # the whole batch: batch ÷ TPOT
    tokens_per_second_per_sequence: float
    # EXPECTED, not a ceiling: the fitted model of ffncalc.expected (None until `speed` adds it)
    expected_seconds_per_step: float | None = None
    expected_tokens_per_second: float | None = None  # the whole batch
    expected_range: list[float] | None = None  # [low, high] seconds per step: held-out 10th–90th percentile
    measured: Attainment | None = None  # with --measured-tpot


class Prefill(Phase):
    prompt: int
    expected_seconds: float | None = None  # EXPECTED time to first token of a lone prompt (ffncalc.expected)
    expected_range: list[float] | None = None  # [low, high] seconds
    measured: Attainment | None = None  # with --measured-ttft


class Request(Result):
    """One request end to end (`output` tokens): its TTFT, then OUTPUT − 1 decode steps over the growing context, at the
    report's batch; ceiling and expected."""

    output: int  # tokens generated, the first by the prefill
    first_context: int  # the cache the first decode step reads: the prompt
    last_context: int  # the cache the last decode step reads: prompt + output − 2
    seconds: float  # CEILING: prefill + Σ decode steps
    tokens_per_second: float  # CEILING, the batch: batch × output ÷ seconds
    expected_seconds: float | None = None  # EXPECTED (ffncalc.expected)
    expected_tokens_per_second: float | None = None
    expected_range: list[float] | None = None  # [low, high] seconds: the prefill's and the steps' ranges summed


class CostAndEnergy(Result):
    """What a token costs at the EXPECTED throughput (ffncalc.expected), never at the ceiling's: money at `price` per
    GPU-hour and energy at the board's full power, over the GPUs the layout uses. None where it cannot be computed
    (no `price`, no board power in the table, or it does not fit)."""

    gpus: int  # GPUs one replica of the layout holds: tensor_parallel × pipeline_parallel
    price_per_gpu_hour: float | None  # as given (`price`)
    board_power_watts: int | None  # the accelerator table's TDP / total board power
    board_power_source: str  # where that figure is from, or why there is none
    input_cost_per_million_tokens: float | None  # prefill: price × gpus × expected TTFT ÷ prompt × 10^6 ÷ 3,600
    output_cost_per_million_tokens: float | None  # decode: price × gpus × expected TPOT ÷ batch × 10^6 ÷ 3,600
    input_joules_per_token_at_most: float | None  # prefill: watts × gpus × expected TTFT ÷ prompt (an upper bound)
    output_joules_per_token_at_most: float | None  # decode: watts × gpus × expected TPOT ÷ batch (an upper bound)


class ExpectedProfile(Result):
    """Which fitted profile an expected figure comes from, what it was fitted on, and how far off it was held out."""

    name: str  # the profile: "typical" (fitted over every engine), or an engine's
    engine_versions: list[str]  # the engine versions of the rows it was fitted on
    chip_family: str  # the family whose coefficients answered ("all": fitted over every chip)
    fitted_on: str  # the measurements and their source
    rows: int  # rows the answering coefficients were fitted on
    held_out_tpot_median_error: float  # leave-one-model-out median |predicted − measured| ÷ measured
    held_out_ttft_median_error: float
    note: str  # a fallback, when one was made


class GpuFigures(Result):
    """The accelerator as the roofline uses it: the peak chosen, the bandwidth, the ridge point, and sources."""

    name: str
    compute_dtype: str
    peak_flops: int  # dense, before --compute-efficiency
    bandwidth: int  # bytes/s, before --bandwidth-efficiency
    memory: int
    interconnect: int | None
    compute_efficiency: float
    bandwidth_efficiency: float
    ridge_point: float  # FLOPs per byte at which an operator turns compute-bound (after efficiencies)
    sources: list[str]
    notes: str = ""
    scale_out: int | None = None  # bytes/s per GPU per direction between nodes
    nvlink_domain: int = 8  # GPUs the interconnect joins; a group larger than it crosses the scale-out network


class PipelineStage(Result):
    """One pipeline stage: its layers, what each of its GPUs holds, and its times (ceilings)."""

    layers: int
    weight_bytes: int  # per GPU
    kv_bytes: int  # per GPU, every sequence of the batch
    decode_seconds: float  # one micro-batch through this stage, with the send to the next
    prefill_seconds: float  # the prompt through this stage, with the send to the next


class Pipeline(Result):
    """Pipeline parallelism: the stages, the micro-batches and the activations passed between stages."""

    stages: list[PipelineStage]
    micro_batches: int  # min(batch, stages)
    micro_batch: int  # sequences in each: ⌈batch ÷ micro-batches⌉
    decode_send_bytes: int  # one stage to the next, per micro-batch step: micro_batch × hidden × 2
    prefill_send_bytes: int  # one stage to the next, the prompt: prompt × hidden × 2
    token_latency_seconds: float  # Σ stages' decode times: one micro-batch's token through every stage


class SpeedReport(ModelInfo):
    """The speed report of one accelerator at one batch — decode, prefill, per component: roofline ceilings,
    and beside each time the expected figure of a fitted engine profile."""

    estimate: str  # "roofline ceiling", with the efficiencies assumed
    gpu: GpuFigures
    batch: int
    context: int
    prompt: int
    tensor_parallel: int
    weight_dtype: str
    quantization: str | None
    kv_dtype: str
    attention: AttentionKernel
    weight_bytes: int  # per GPU
    kv_bytes: int  # per GPU, the whole batch at the context
    activation_bytes: int  # per GPU: its share of the largest activation buffer (as `memory` counts it)
    memory_needed: int  # weights + KV + activations per GPU (footprint.inference_need, as `memory`)
    runtime_reserve: int  # kept by the runtime on each GPU; "fits" compares memory_needed with the rest
    fits: bool
    decode: DecodeStep
    prefill: Prefill
    conventions: list[str]
    # What memory_needed is compared with: the accelerator's memory less the runtime reserve (for a GGUF, llama.cpp's
    # usable memory: a Mac's wired share, less the reserve). Stated once here, read by every message about fitting.
    memory_usable: int | None = None
    engine_profile: ExpectedProfile | None = None  # what the expected figures were fitted on
    request: Request | None = None  # with --output: one request end to end
    layout: ServingLayout | None = None  # tensor, expert and attention data-parallel split (serving_layout)
    disaggregation: Disaggregation | None = None  # with --disaggregate P:D and --output
    pipeline: Pipeline | None = None  # with pipeline parallelism: the stages (figures above: the busiest stage's)
    cost_and_energy: CostAndEnergy | None = None  # at the expected throughput; its figures None when not computable


class FirstNotFitting(Result):
    """On one accelerator, the smallest batch asked for that does not fit, and by how much."""

    gpu: str
    batch: int
    memory_needed: int  # per GPU, weights + KV + activations
    memory_usable: int  # the accelerator's memory less the runtime reserve


class SpeedRun(Result):
    """The speed answer (its JSON), one shape whatever the accelerators and batches: a report for every accelerator ×
    batch asked (each says whether it fits: a ceiling for one that does not is no answer, and the tables leave its
    figures out), and per accelerator the first batch that does not fit."""

    reports: list[SpeedReport]
    not_fitting: list[FirstNotFitting]
    warnings: list[str]  # the model's and each accelerator's, once each


# --- the model's traffic, by operator ------------------------------------------------------------------


class Traffic(Result):
    """FLOPs and bytes of one phase by operator (before any accelerator)."""

    flops: dict[str, int]
    bytes: dict[str, int]
    allreduce_bytes: int
    all_to_all_bytes: int = 0  # per GPU: an MoE layer's dispatch and combine under expert parallelism
    expert_runs: float = 0.0  # per GPU: routed experts run, summed over the MoE layers (see expert_runs)


def expert_runs(spec: ModelSpec, tokens: int, layout: ServingLayout) -> float:
    """The routed experts one GPU runs for TOKENS tokens, summed over the MoE layers: each layer's E ÷ EP experts
    of the GPU × the share a batch touches under uniform routing, 1 − (1 − k/E)^B (the share whose bytes
    distinct_expert_bytes counts). 0 without routed experts. Each is a grouped GEMM's own slice of work: its fixed
    cost is a term of the expected time (ffncalc/expected.py), not of the ceiling."""
    moe = _moe_shape(spec)
    if moe is None:
        return 0.0
    num_experts, per_token = moe
    layers = sum(isinstance(layer.ffn, MoeFfn) for layer in generating_layers(spec))
    touched = 1.0 if per_token >= num_experts else 1 - ((num_experts - per_token) / num_experts) ** tokens
    return layers * num_experts / layout.expert_parallel * touched


def distinct_expert_bytes(routed: int, num_experts: int, per_token: int, tokens: int) -> int:
    """⌊ROUTED × (1 − (1 − k/E)^B)⌋, the routed-expert bytes a batch of B tokens reads, exactly, in time that does
    not grow with B: once ROUTED × (1 − k/E)^B is below a half (by logarithms, with margin), the untouched share is
    a positive amount under one byte and the floor is ROUTED − 1, which the exact power (a number of B digits, a
    prompt of 8M tokens took seconds) would also give."""
    import math

    if per_token >= num_experts:
        return routed
    untouched = (num_experts - per_token) / num_experts
    if routed and tokens * math.log(untouched) + math.log(routed) < math.log(0.5) - 1e-9 * tokens:
        return routed - 1
    return int(routed * distinct_experts_fraction(num_experts, per_token, tokens))


def distinct_experts_fraction(num_experts: int, per_token: int, tokens: int) -> Fraction:
    """Expected share of E experts a batch of B tokens touches under uniform routing: 1 − (1 − k/E)^B."""
    return 1 - Fraction(num_experts - per_token, num_experts) ** tokens


def _weights_by_operator(stored: Layout, gpus: int, layout: ServingLayout | None = None) -> dict[str, int]:
    """Bytes of every stored tensor by operator, per GPU: matrices split by GPUS (rounded up), vectors and routers
    copied; routed experts apart under 'routed_experts'. LAYOUT: attention whole under attention data-parallel
    (and the input embedding copied), routed experts E/EP whole per rank under expert parallelism."""
    layout = layout or ServingLayout(tensor_parallel=gpus)
    found = {name: 0 for name in (*OPERATORS, "routed_experts", "routed_attention", "embedding_table")}
    routed: list[tuple[int, int]] = []
    for tensor, count in stored:
        split = len(tensor.shape) >= 2 and tensor.part != "router"
        ranks = gpus
        if layout.dp_attention and tensor.component in ("attention", "embedding"):
            ranks = 1
        size = (-(-tensor.bytes // ranks) if split else tensor.bytes) * count
        if tensor.part == "routed_experts":
            routed.append((tensor.bytes if split else -tensor.bytes, count))
        elif tensor.part in ROUTED_ATTENTION_PARTS:
            found["routed_attention"] += size
        elif tensor.component == "attention":
            found["attention_projections"] += size
        elif tensor.component in ("ffn", "mixer", "lm_head"):
            found[{"ffn": "ffn", "mixer": "mixers", "lm_head": "lm_head"}[tensor.component]] += size
        elif tensor.component == "embedding":
            found["embedding_table"] += size
        else:
            found["other"] += size
    vectors = sum(-size * count for size, count in routed if size < 0)  # an expert's vectors: copied
    found["routed_experts"] = routed_expert_bytes([(size, count) for size, count in routed if size > 0], layout)
    if layout.expert_parallel > 1:
        vectors //= layout.expert_parallel
    found["routed_experts"] += vectors
    return found


# JetMoE's q and o experts (Attention.q_o_experts: tensors.attention_tensors names their parts so): k of E read a token
ROUTED_ATTENTION_PARTS = frozenset({"q_experts", "o_experts"})


def _routed_attention_bytes(spec: ModelSpec, weights: dict[str, int], tokens: int) -> int:
    """The routed attention experts' bytes (JetMoE's q and o) that TOKENS read: as routed MLP experts, the share of
    the E experts they touch, 1 − (1 − k/E)^B."""
    stored = weights.get("routed_attention", 0)
    for layer in generating_layers(spec):
        if stored and layer.attention is not None and layer.attention.q_o_experts is not None:
            return distinct_expert_bytes(stored, *layer.attention.q_o_experts, tokens)
    return stored


def _moe_shape(spec: ModelSpec) -> tuple[int, int] | None:
    """(E, k) of the model's MoE layers; None without one. ffncalc's families give every MoE layer the same E and k."""
    for layer in generating_layers(spec):
        if isinstance(layer.ffn, MoeFfn):
            return layer.ffn.num_experts, layer.ffn.experts_per_token
    return None


def sublayer_count(spec: ModelSpec) -> int:
    """Token-mixing (attention or mixer) and FFN sublayers of the generating layers: what a step launches per layer,
    and (with tensor parallelism) the all-reduces it makes. A hybrid layer with a mixer in attention's place and an
    FFN after it (Qwen3.5's and Qwen3-Next's Gated DeltaNet layers, Jamba's Mamba layers) has two, as an attention
    layer does; an attention and a mixer side by side in one layer (Falcon-H1, Hymba) share one."""
    return _layer_counts(spec)["blocks"]


def _layer_counts(spec: ModelSpec) -> dict[str, int]:
    layers = generating_layers(spec)
    return {
        "attention": sum(layer.attention is not None for layer in layers),
        "ffn": sum(layer.ffn is not None for layer in layers),
        "mixers": sum(layer.mixer is not None for layer in layers),
        "blocks": sum(
            (layer.attention is not None or layer.mixer is not None) + (layer.ffn is not None) for layer in layers
        ),
    }


def _activation_bytes(spec: ModelSpec, tokens: int, logits_tokens: int) -> dict[str, int]:
    """Each operator reads its input and writes its output once per layer: 2 · tokens · hidden · 2 bytes; the head
    reads its input and writes logits_tokens · vocab."""
    counts = _layer_counts(spec)
    each_way = tokens * spec.hidden_size * ACTIVATION_BYTES
    return {
        "attention_projections": 2 * each_way * counts["attention"],
        "attention_scores": 0,  # Q read and output written: counted with the projections' outputs and inputs
        "ffn": 2 * each_way * counts["ffn"],
        "mixers": 2 * each_way * counts["mixers"],
        "lm_head": logits_tokens * (spec.hidden_size + lm_head_rows(spec)) * ACTIVATION_BYTES if spec.lm_head else 0,
        "embedding": each_way,  # the rows it writes out
        "other": 0,
    }


def _cache_split(
    spec: ModelSpec, context: int, batch: int, kv_dtype: str, gpus: int, layout: ServingLayout | None = None
) -> tuple[int, int]:
    """(attention KV bytes, mixer state bytes) per GPU for the batch at the context, as `memory` splits them."""
    if layout is not None and layout.dp_attention:  # each GPU its own requests' cache, whole
        batch, gpus = batch_share(batch, layout), 1
    cache = kv_cache(spec, context, batch, kv_dtype)
    state = sum(layer.bytes for layer in cache.layers if layer.elements_per_token == 0)
    if gpus == 1:
        return cache.bytes - state, state
    total, _ = per_gpu_cache(cache_shares(spec, cache), cache.bytes, gpus)
    state_share = -(-state // gpus)
    return total - state_share, state_share


def _new_token_kv_bytes(spec: ModelSpec, kv_dtype: str) -> int:
    """Bytes every layer writes for one new token: its KV entry (kv_heads · (qk + v), or MLA's latent)."""
    layers = generating_layers(spec)
    elements = sum(kv_elements_per_token(layer.attention) for layer in layers if layer.attention is not None)
    return elements * DTYPE_BYTES[kv_dtype]


def _score_elements(spec: ModelSpec, keys_of) -> int:
    """Σ over attention layers of heads × keys (× passes: DiffLlama scores twice): the score matrices an eager kernel
    writes and reads."""
    return sum(
        layer.attention.num_heads * layer.attention.passes * keys_of(layer.attention.window)
        for layer in generating_layers(spec)
        if layer.attention is not None
    )


def decode_traffic(
    spec: ModelSpec,
    stored: Layout,
    context: int,
    batch: int,
    kv_dtype: str,
    gpus: int,
    attention: AttentionKernel,
    weights: dict[str, int] | None = None,
    store: Any = None,
    layout: ServingLayout | None = None,
) -> Traffic:
    """FLOPs and bytes of one decode step: B tokens at context n (see CONVENTIONS). WEIGHTS: the stored bytes by
    operator per GPU when the caller has them already (_weights_by_operator walks every tensor). STORE: a GGUF's
    cache as llama.cpp holds it (llamacpp.LlamaCppStore: kv_read, kv_token) in place of the spec's."""
    layout = layout or ServingLayout(tensor_parallel=gpus)
    profile = flops_profile(spec, "absorbed")
    per_token = per_token_flops(profile, context)
    weights = weights or _weights_by_operator(stored, gpus, layout)
    share = batch_share(batch, layout)  # sequences the busiest attention rank holds
    moe = _moe_shape(spec)
    routed = weights["routed_experts"]
    if moe is not None and routed:
        routed = distinct_expert_bytes(routed, *moe, batch)
    if store is not None:
        kv_bytes, state_bytes, kv_write = store.kv_read(context, batch), 0, store.kv_token() * batch
    else:
        kv_bytes, state_bytes = _cache_split(spec, context, batch, kv_dtype, gpus, layout)
        kv_write = -(-_new_token_kv_bytes(spec, kv_dtype) * share // layout.attention_split)
    activations = _activation_bytes(spec, batch, batch)
    if layout.dp_attention:
        activations["attention_projections"] = _activation_bytes(spec, share, share)["attention_projections"]
    embedding_rows = weights["embedding_table"] * min(batch, spec.vocab_size) // spec.vocab_size
    head = weights["lm_head"] or (weights["embedding_table"] if spec.lm_head else 0)  # a tied head reads the table
    eager = 2 * ACTIVATION_BYTES * share * _score_elements(spec, lambda window: min(context, window or context))
    routed_attention = _routed_attention_bytes(spec, weights, share)
    bytes_ = {
        "attention_projections": weights["attention_projections"]
        + routed_attention
        + activations["attention_projections"],
        "attention_scores": kv_bytes + kv_write + (-(-eager // layout.attention_split) if attention == "eager" else 0),
        "ffn": weights["ffn"] + routed + activations["ffn"],
        "mixers": weights["mixers"] + 2 * state_bytes + activations["mixers"],
        "lm_head": head + activations["lm_head"],
        "embedding": embedding_rows + activations["embedding"],
        "other": weights["other"],
    }
    flops = _flops_by_operator(field_values(per_token), batch, gpus)
    if layout.dp_attention:  # each rank its own sequences' attention, unsplit
        attention_flops = _flops_by_operator(field_values(per_token), share, 1)
        for name in ("attention_projections", "attention_scores"):
            flops[name] = attention_flops[name]
    dispatch, combine = all_to_all_bytes(spec, batch, layout)
    return Traffic(
        flops=flops,
        bytes=bytes_,
        allreduce_bytes=allreduce_bytes(spec, batch, layout),
        all_to_all_bytes=dispatch + combine,
        expert_runs=expert_runs(spec, batch, layout),
    )


def prefill_traffic(
    spec: ModelSpec,
    stored: Layout,
    prompt: int,
    kv_dtype: str,
    gpus: int,
    attention: AttentionKernel,
    weights: dict[str, int] | None = None,
    store: Any = None,
    layout: ServingLayout | None = None,
) -> Traffic:
    """FLOPs and bytes of a prompt of P tokens: weights once, the KV written and read once by the fused kernel. An
    encoder-decoder's prompt is its encoder's input: the encoder reads it, the decoder runs its start token over it
    (compute.first_token_flops)."""
    profile: ContextProfile = flops_profile(spec, "plain")
    if any(layer.cross_attention is not None for layer in spec.layers):
        prefill = field_values(first_token_flops(spec, prompt))
    else:
        prefill = field_values(prefill_flops(profile, prompt))
        prefill["lm_head"] = profile.lm_head  # the head runs for the last position only
    layout = layout or ServingLayout(tensor_parallel=gpus)
    weights = weights or _weights_by_operator(stored, gpus, layout)
    moe = _moe_shape(spec)
    routed = weights["routed_experts"]
    if moe is not None and routed:
        routed = distinct_expert_bytes(routed, *moe, prompt)
    if store is not None:
        kv_bytes, state_bytes = store.kv_read(prompt, 1), 0
    else:
        kv_bytes, state_bytes = _cache_split(spec, prompt, 1, kv_dtype, gpus, layout)
    activations = _activation_bytes(spec, prompt, 1)
    embedding_rows = weights["embedding_table"] * min(prompt, spec.vocab_size) // spec.vocab_size
    head = weights["lm_head"] or (weights["embedding_table"] if spec.lm_head else 0)
    eager = 2 * ACTIVATION_BYTES * _score_elements(spec, lambda window: causal_keys(prompt, window))
    routed_attention = _routed_attention_bytes(spec, weights, prompt)
    bytes_ = {
        "attention_projections": weights["attention_projections"]
        + routed_attention
        + activations["attention_projections"],
        "attention_scores": 2 * kv_bytes + (-(-eager // layout.attention_split) if attention == "eager" else 0),
        "ffn": weights["ffn"] + routed + activations["ffn"],
        "mixers": weights["mixers"] + 2 * state_bytes + activations["mixers"],
        "lm_head": head + activations["lm_head"],
        "embedding": embedding_rows + activations["embedding"],
        "other": weights["other"],
    }
    flops = _flops_by_operator(prefill, 1, gpus)
    if layout.dp_attention:  # one prompt is one rank's: its attention unsplit
        attention_flops = _flops_by_operator(prefill, 1, 1)
        for name in ("attention_projections", "attention_scores"):
            flops[name] = attention_flops[name]
    dispatch, combine = all_to_all_bytes(spec, prompt, layout)
    if layout.dp_attention:  # a lone prompt's tokens are all on its rank: it dispatches them all
        dispatch, combine = all_to_all_bytes(spec, prompt * layout.tensor_parallel, layout)
    return Traffic(
        flops=flops,
        bytes=bytes_,
        allreduce_bytes=allreduce_bytes(spec, prompt, layout),
        all_to_all_bytes=dispatch + combine,
        expert_runs=expert_runs(spec, prompt, layout),
    )


def _flops_by_operator(breakdown: dict[str, int], multiple: int, gpus: int) -> dict[str, int]:
    """A FlopsBreakdown's fields as operators, × MULTIPLE tokens, split over GPUS (rounded up)."""

    def share(value: int) -> int:
        return -(-value * multiple // gpus)

    return {
        "attention_projections": share(breakdown["attention_projections"]),
        "attention_scores": share(breakdown["attention_scores"]),
        "ffn": share(breakdown["ffn"]),
        "mixers": share(breakdown["mixer"] + breakdown["mixer_state"]),
        "lm_head": share(breakdown["lm_head"]),
        "embedding": 0,
        "other": share(breakdown["other"]),
    }


# --- the roofline ----------------------------------------------------------------------------------------


class Roofline(Result):
    """An accelerator's effective peak (FLOP/s) and bandwidth (B/s), and its interconnect per direction; SPAN: the
    GPUs a tensor- or expert-parallel collective joins, which cross the scale-out network past the NVLink domain."""

    peak: float
    bandwidth: float
    interconnect: float | None
    scale_out: float | None = None
    domain: int = 8
    span: int = 1

    @property
    def crosses_nodes(self) -> bool:
        """Whether the group leaves the NVLink domain over a known scale-out network (without a figure for it, the
        interconnect's time is the ceiling: no slower link is known)."""
        return self.span > self.domain and self.scale_out is not None

    def allreduce_seconds(self, sent: int) -> float:
        """A ring all-reduce runs at its slowest link: the interconnect in one domain, else the scale-out network."""
        link = self.scale_out if self.crosses_nodes else self.interconnect
        if link is None:
            raise ValueError("tensor parallelism needs an interconnect bandwidth")
        return sent / link

    def all_to_all_seconds(self, sent: int) -> float:
        """Each GPU sends to the span's other GPUs evenly: the share for GPUs of its own domain over the
        interconnect, the rest over the scale-out network at the same time; the slower of the two."""
        if not self.crosses_nodes or self.scale_out is None or self.interconnect is None:
            return sent / self.interconnect if self.interconnect else 0.0
        peers = self.span - 1
        inside = sent * (self.domain - 1) / peers
        return max(inside / self.interconnect, (sent - inside) / self.scale_out)


def operator_time(name: str, flops: int, bytes_: int, roof: Roofline) -> OperatorTime:
    """max(FLOPs ÷ peak, bytes ÷ bandwidth), and which of the two it is."""
    compute, memory = flops / roof.peak, bytes_ / roof.bandwidth
    return OperatorTime(
        name=name,
        flops=flops,
        bytes=bytes_,
        compute_seconds=compute,
        memory_seconds=memory,
        seconds=max(compute, memory),
        bound="compute" if compute > memory else "memory",
        intensity=flops / bytes_ if bytes_ else None,
    )


def phase_times(traffic: Traffic, roof: Roofline) -> tuple[list[OperatorTime], float, Bound]:
    """The operators that do anything, the all-reduce time (and the all-to-all's: interconnect time, not
    apart), and what bounds most of the time."""
    components = [
        operator_time(name, traffic.flops[name], traffic.bytes[name], roof)
        for name in OPERATORS
        if traffic.flops[name] or traffic.bytes[name]
    ]
    allreduce = 0.0
    if traffic.allreduce_bytes or traffic.all_to_all_bytes:
        if roof.interconnect is None:
            raise ValueError("tensor parallelism needs an interconnect bandwidth")
        allreduce = roof.allreduce_seconds(traffic.allreduce_bytes)
    compute = sum(c.seconds for c in components if c.bound == "compute")
    memory = sum(c.seconds for c in components if c.bound == "memory")
    return components, allreduce, "compute" if compute > memory else "memory"


def overlapped(work: float, all_to_all: float) -> float:
    """The ceiling of a step whose MoE all-to-all can hide behind its compute: the larger of the two. DeepSeek's
    serving splits each batch in two and dispatches one half while the other computes (open-infra-index, "Day 6:
    DeepSeek-V3/R1 Inference System Overview"), so a ceiling that added them would be beaten; the expected figure
    adds them (expected.with_expected), as an engine without that overlap runs."""
    return max(work, all_to_all)


def decode_step(traffic: Traffic, roof: Roofline, batch: int) -> DecodeStep:
    components, allreduce, bound = phase_times(traffic, roof)
    all_to_all = roof.all_to_all_seconds(traffic.all_to_all_bytes) if traffic.all_to_all_bytes else 0.0
    seconds = overlapped(sum(c.seconds for c in components) + allreduce, all_to_all)
    return DecodeStep(
        tokens=batch,
        flops=sum(traffic.flops.values()),
        bytes=sum(traffic.bytes.values()),
        components=components,
        allreduce_bytes=traffic.allreduce_bytes,
        allreduce_seconds=allreduce,
        all_to_all_bytes=traffic.all_to_all_bytes,
        all_to_all_seconds=all_to_all,
        expert_runs=traffic.expert_runs,
        seconds=seconds,
        bound=bound,
        seconds_per_step=seconds,
        tokens_per_second=batch / seconds,
        tokens_per_second_per_sequence=1 / seconds,
    )


def prefill_step(traffic: Traffic, roof: Roofline, prompt: int) -> Prefill:
    components, allreduce, bound = phase_times(traffic, roof)
    all_to_all = roof.all_to_all_seconds(traffic.all_to_all_bytes) if traffic.all_to_all_bytes else 0.0
    return Prefill(
        tokens=prompt,
        flops=sum(traffic.flops.values()),
        bytes=sum(traffic.bytes.values()),
        components=components,
        allreduce_bytes=traffic.allreduce_bytes,
        allreduce_seconds=allreduce,
        all_to_all_bytes=traffic.all_to_all_bytes,
        all_to_all_seconds=all_to_all,
        expert_runs=traffic.expert_runs,
        seconds=overlapped(sum(c.seconds for c in components) + allreduce, all_to_all),
        bound=bound,
        prompt=prompt,
    )


# W4A4 schemes: weights and activations both in 4-bit floats, whose GEMMs run on FP4 tensor cores (Blackwell's
# NVFP4: ModelOpt's quant_algo NVFP4, compressed-tensors' nvfp4 with 4-bit input activations). W4A16 schemes (AWQ,
# GPTQ, W4A16_NVFP4, MXFP4 weights with 16-bit activations) dequantise to a 16-bit GEMM.
FP4_ACTIVATION_METHODS = ("modelopt-nvfp4", "compressed-tensors-nvfp4")
# Integer weights (GPTQ, AWQ, bitsandbytes, compressed-tensors' int, the int4/int8 what-ifs, GGUF's block formats):
# the fastest engines run them on INT8 tensor cores (llama.cpp's MMQ kernels, TensorRT-LLM's W4A8/W8A8), so the
# ceiling takes the chip's INT8 peak where it has one (a chip without it: BF16, and its notes say so). A W4A16 engine
# dequantises to a 16-bit GEMM and runs slower than this ceiling, never faster.
INTEGER_METHODS = ("gptq", "awq", "auto-round", "bitsandbytes_4bit", "bitsandbytes_8bit", "compressed-tensors", "eetq")


def compute_dtype_for(weight_dtype: str, quantization: str | None, activations_quantized: bool = False) -> str:
    """The peak the matmuls run at, following the weights: FP8 checkpoints on FP8, W4A4 FP4 checkpoints (NVFP4 with
    quantized activations) on FP4, integer weights (INTEGER_METHODS, integer dtypes, quantized GGUF) on INT8,
    everything else on BF16. A chip without the unit runs BF16 (gpu_figures says so)."""
    if weight_dtype.startswith("F8") or (quantization or "").startswith(("fp8", "modelopt-fp8")):
        return "fp8"
    if quantization in FP4_ACTIVATION_METHODS and activations_quantized:
        return "fp4"
    if weight_dtype.startswith(("I", "U")) or quantization in INTEGER_METHODS:
        return "int8"
    if weight_dtype == "GGUF" and not (quantization or "").endswith(("F32", "F16", "BF16")):
        return "int8"  # a quantized GGUF file (MOSTLY_Q4_K_M …): llama.cpp's MMQ kernels, as above
    return "bf16"


def gpu_figures(
    gpu: Accelerator, compute_dtype: str, compute_efficiency: float, bandwidth_efficiency: float
) -> GpuFigures:
    """The accelerator's figures for COMPUTE_DTYPE (a chip without that unit runs BF16, and the notes say so)."""
    peak = gpu.peak(compute_dtype)
    notes = gpu.notes
    used = compute_dtype
    if peak is None:
        peak = gpu.peak("bf16") or 0
        used = "bf16"
        notes = (f"{gpu.name} has no {compute_dtype} units: matmuls at its BF16 peak. " + notes).strip()
    return GpuFigures(
        name=gpu.name,
        compute_dtype=used,
        peak_flops=peak,
        bandwidth=gpu.bandwidth,
        memory=gpu.memory,
        interconnect=gpu.interconnect,
        compute_efficiency=compute_efficiency,
        bandwidth_efficiency=bandwidth_efficiency,
        ridge_point=(peak * compute_efficiency) / (gpu.bandwidth * bandwidth_efficiency),
        sources=list(gpu.sources),
        notes=notes,
        scale_out=gpu.scale_out,
        nvlink_domain=gpu.nvlink_domain,
    )


def estimate_speed(
    spec: ModelSpec,
    info: ModelInfo,
    *,
    stored: Layout,
    weight_dtype: str,
    quantization: str | None,
    gpu: GpuFigures,
    batch: int,
    context: int,
    prompt: int,
    kv_dtype: str,
    gpus: int = 1,
    attention: AttentionKernel = "flash",
    reserve: int = 0,
    store: Any = None,
    layout: ServingLayout | None = None,
    stage: tuple[bool, bool] = (True, True),
) -> SpeedReport:
    """Decode at BATCH × CONTEXT and prefill of PROMPT on GPU (over GPUS with tensor parallelism): roofline ceilings.

    STORE: a GGUF under llama.cpp (llamacpp.LlamaCppStore): the file's tensor bytes by operator, its cache in
    llama.cpp's cache type, and what llama.cpp keeps on the GPU, in place of the spec's stored layout."""
    layout = layout or ServingLayout(tensor_parallel=gpus)
    roof = Roofline(
        peak=gpu.peak_flops * gpu.compute_efficiency,
        bandwidth=gpu.bandwidth * gpu.bandwidth_efficiency,
        interconnect=gpu.interconnect,
        scale_out=gpu.scale_out,
        domain=gpu.nvlink_domain,
        span=layout.tensor_parallel,
    )
    # once: walking every stored tensor is most of the time
    by_operator = store.weights if store is not None else _weights_by_operator(stored, gpus, layout)
    first, last = stage
    decode = decode_step(
        _staged(
            decode_traffic(spec, stored, context, batch, kv_dtype, gpus, attention, by_operator, store, layout),
            first,
            last,
        ),
        roof,
        batch,
    )
    prefill = prefill_step(
        _staged(
            prefill_traffic(spec, stored, prompt, kv_dtype, gpus, attention, by_operator, store, layout),
            first,
            last,
        ),
        roof,
        prompt,
    )
    weights = sum(by_operator.values())
    if not first and not (last and spec.tie_word_embeddings and spec.lm_head):  # a tied head keeps the table
        weights -= by_operator["embedding_table"]
    if not last:
        weights -= by_operator["lm_head"]
    usable = gpu.memory - reserve
    if store is not None:  # what llama.cpp puts on the GPU: all layers offloaded, its cache, the compute buffer
        weights, kv_bytes, activation_total = store.resident(context, batch, reserve)
        state_bytes = 0
        needed = weights + kv_bytes + activation_total
        usable = store.usable(gpu, reserve)
    else:
        kv_bytes, state_bytes = _cache_split(spec, context, batch, kv_dtype, gpus, layout)
        activation_total = inference_activations(
            spec, batch, min(PREFILL_CHUNK, context), activation_size(weight_dtype), logits=last
        ).bytes
        needed = inference_need(weights, kv_bytes + state_bytes, activation_total, gpus)
    efficiency = (
        ""
        if gpu.compute_efficiency == 1 and gpu.bandwidth_efficiency == 1
        else f", at {gpu.compute_efficiency:g} of peak FLOP/s and {gpu.bandwidth_efficiency:g} of peak bandwidth (assumed)"
    )
    return SpeedReport(
        **field_values(info),
        estimate=f"roofline ceiling{efficiency}",
        gpu=gpu,
        batch=batch,
        context=context,
        prompt=prompt,
        tensor_parallel=gpus,
        weight_dtype=weight_dtype,
        quantization=quantization,
        kv_dtype=kv_dtype,
        attention=attention,
        weight_bytes=weights,
        kv_bytes=kv_bytes + state_bytes,
        activation_bytes=-(-activation_total // gpus),
        memory_needed=needed,
        runtime_reserve=reserve,
        fits=needed <= usable,
        memory_usable=usable,
        decode=decode,
        prefill=prefill,
        layout=layout,
        conventions=_conventions(store, layout),
    )


def _conventions(store: Any, layout: ServingLayout) -> list[str]:
    """CONVENTIONS, a GGUF's, and the layout's when it has expert parallelism or attention data-parallel."""
    found = list(CONVENTIONS) if store is None else [*CONVENTIONS, *store.conventions]
    if layout.expert_parallel > 1:
        found.append(LAYOUT_CONVENTIONS[0])
    if layout.dp_attention:
        found.append(LAYOUT_CONVENTIONS[1])
    return found


def _staged(traffic: Traffic, first: bool, last: bool) -> Traffic:
    """A pipeline stage's traffic: the embedding on the first stage only, the head on the last."""
    if first and last:
        return traffic
    flops, bytes_ = dict(traffic.flops), dict(traffic.bytes)
    for name, kept in (("embedding", first), ("lm_head", last)):
        if not kept:
            flops[name], bytes_[name] = 0, 0
    return Traffic(
        flops=flops,
        bytes=bytes_,
        allreduce_bytes=traffic.allreduce_bytes,
        all_to_all_bytes=traffic.all_to_all_bytes,
        expert_runs=traffic.expert_runs,
    )


def boundary_seconds_per_byte(gpu: GpuFigures, tensor_parallel: int, stages: int) -> list[float]:
    """Seconds per byte each stage takes to pass its output to the next (0 after the last): stage i holds GPUs
    i·tp … (i+1)·tp − 1, so its boundary crosses nodes where (i+1)·tp is a multiple of the NVLink domain (every one
    once tp fills a domain): the scale-out network there, the interconnect inside."""
    found = []
    for index in range(stages):
        if index == stages - 1:
            found.append(0.0)
            continue
        crosses = (index + 1) * tensor_parallel % gpu.nvlink_domain == 0 or tensor_parallel >= gpu.nvlink_domain
        link = gpu.scale_out if crosses and gpu.scale_out else gpu.interconnect
        if link is None:
            raise ValueError("pipeline parallelism needs an interconnect bandwidth")
        found.append(1 / link)
    return found


def estimate_pipelined(
    spec: ModelSpec,
    info: ModelInfo,
    *,
    stored_for: Any,
    batch: int,
    layout: ServingLayout,
    stored: Layout | None = None,  # the whole model's: each stage's comes from STORED_FOR
    expect: Any = None,
    **given: Any,
) -> SpeedReport:
    """estimate_speed over layout.pipeline_parallel stages (serving_layout.PIPELINE_CONVENTION): each stage's
    ceiling at a micro-batch, the busiest stage's report with the pipeline's TPOT and TTFT. STORED_FOR(stage spec,
    first, last): what the stage stores (footprint.stage_weight_layout with the checkpoint's dtype and scheme). EXPECT(report, stage
    spec): a stage's report with its expected figures (expected.with_expected over the stage's sublayers), combined
    over the stages by the same rule as the ceilings."""
    from .serving_layout import stage_specs

    stages = stage_specs(spec, layout.pipeline_parallel)
    micro_batches = min(batch, len(stages))
    micro_batch = -(-batch // micro_batches)
    decode_send = micro_batch * spec.hidden_size * ACTIVATION_BYTES
    prefill_send = given["prompt"] * spec.hidden_size * ACTIVATION_BYTES
    seconds_per_byte = boundary_seconds_per_byte(given["gpu"], layout.tensor_parallel, len(stages))
    reports, records = [], []
    for index, stage_spec in enumerate(stages):
        first, last = index == 0, index == len(stages) - 1
        at_micro = estimate_speed(
            stage_spec, info, stored=stored_for(stage_spec, first, last), batch=micro_batch, layout=layout, stage=(first, last),
            **given,
        )  # fmt: skip
        if expect is not None:
            at_micro = expect(at_micro, stage_spec)
        held = estimate_speed(
            stage_spec,
            info,
            stored=stored_for(stage_spec, first, last),
            batch=batch,
            layout=layout,
            stage=(first, last),
            **given,
        )  # its memory: every sequence of the batch
        decode_seconds = at_micro.decode.seconds + decode_send * seconds_per_byte[index]
        prefill_seconds = at_micro.prefill.seconds + prefill_send * seconds_per_byte[index]
        reports.append((held, at_micro))
        records.append(
            PipelineStage(
                layers=len(generating_layers(stage_spec)),
                weight_bytes=held.weight_bytes,
                kv_bytes=held.kv_bytes,
                decode_seconds=decode_seconds,
                prefill_seconds=prefill_seconds,
            )
        )
    latency = sum(r.decode_seconds for r in records)
    tpot = max(latency, micro_batches * max(r.decode_seconds for r in records))
    ttft = sum(r.prefill_seconds for r in records)
    busiest = max(range(len(stages)), key=lambda i: reports[i][0].memory_needed)
    held, at_micro = reports[busiest]
    slowest = max(range(len(stages)), key=lambda i: records[i].decode_seconds)
    decode = field_values(reports[slowest][1].decode)
    decode.update(seconds_per_step=tpot, tokens_per_second=batch / tpot, tokens_per_second_per_sequence=1 / tpot)
    prefill = field_values(reports[0][1].prefill)
    prefill.update(seconds=ttft)
    report = field_values(held)
    if expect is not None:  # each stage's expected figures, combined as the ceilings are

        def pace(times: list[float]) -> float:
            return max(sum(times), micro_batches * max(times))

        steps = [r[1].decode for r in reports]
        firsts = [r[1].prefill for r in reports]

        def figures(expected: float | None, low_high: list[float] | None) -> list[float]:
            assert expected is not None and low_high is not None  # EXPECT has run
            return [expected, *low_high]

        step_figures = [figures(s.expected_seconds_per_step, s.expected_range) for s in steps]
        first_figures = [figures(p.expected_seconds, p.expected_range) for p in firsts]
        step_at = [[f[k] + decode_send * n for f, n in zip(step_figures, seconds_per_byte)] for k in range(3)]
        first_at = [sum(f[k] + prefill_send * n for f, n in zip(first_figures, seconds_per_byte)) for k in range(3)]
        expected_step = pace(step_at[0])
        decode.update(
            expected_seconds_per_step=expected_step,
            expected_tokens_per_second=batch / expected_step,
            expected_range=[max(tpot, pace(step_at[1])), pace(step_at[2])],
        )
        prefill.update(expected_seconds=first_at[0], expected_range=[max(ttft, first_at[1]), first_at[2]])
        report.update(engine_profile=reports[0][1].engine_profile)
        held = reports[0][1]  # its conventions carry the expected figures'
    report.update(
        batch=batch,
        decode=DecodeStep(**decode),
        prefill=Prefill(**prefill),
        conventions=[*held.conventions, PIPELINE_CONVENTION],
        pipeline=Pipeline(
            stages=records,
            micro_batches=micro_batches,
            micro_batch=micro_batch,
            decode_send_bytes=decode_send,
            prefill_send_bytes=prefill_send,
            token_latency_seconds=latency,
        ),
    )
    return SpeedReport(**report)


def engine_weights(stored: Layout, layout: ServingLayout, engine: str) -> int:
    """Weights per GPU as the engine lays them out with expert parallelism or attention data-parallel. SGLang:
    as the roofline (attention whole under DP attention, dense parts over tensor_parallel, E/EP experts). vLLM with
    data_parallel_size N and enable_expert_parallel (its engine arguments): every non-expert weight whole on each DP rank (tensor
    parallel 1 within it), the experts over EP = the N GPUs."""
    if engine == "vllm" and layout.dp_attention:
        dense = _weights_by_operator(stored, 1, ServingLayout())
        experts = _weights_by_operator(
            stored,
            layout.tensor_parallel,
            ServingLayout(tensor_parallel=layout.tensor_parallel, expert_parallel=layout.tensor_parallel),
        )["routed_experts"]
        return sum(dense.values()) - dense["routed_experts"] + experts
    return sum(_weights_by_operator(stored, layout.tensor_parallel, layout).values())
