"""Memory footprint: will a model fit — its weights as stored, the KV cache and recurrent state by context and batch,
the activations of one forward, and for training the gradients, optimizer states and activations.

Conventions:
- exact integers of bytes; tables show GiB (2³⁰ bytes), and accelerators' memory is their vendor's
  figure in GiB (an H100's "80 GB" of HBM is 80 GiB), before the runtime's own overhead;
- weights as the checkpoint stores them (``storage``: the config's dtype and quantization_config),
  or as ``dtype`` asks; a tied head is one tensor;
- KV cache, per attention layer and token: kv_heads · (qk_head_dim + v_head_dim) elements (kv_heads ·
  qk_head_dim where the keys are the values; MLA: its latent, kv_lora_rank + qk_rope_head_dim, whatever
  the heads; a sparse-attention indexer adds its key, head_dim), for at most the window (sliding) or
  chunk (chunked attention) of tokens; a layer with compressed keys also keeps its n // rate entries
  (and its indexer's compressed keys), not the partial window still being pooled; a layer that reads
  another layer's keys and values (Gemma 3n's and Gemma 4's shared KV) caches none; an encoder-decoder's
  decoder layers also cache the encoder output's keys and values (the encoder's length is the context, or
  fixed: Whisper's encoder output is always max_source_positions long);
  a state-space or linear-attention mixer keeps its recurrent state and its convolutions' last inputs,
  whatever the context;
- tensor parallelism over N GPUs splits every matrix (linear weights, embedding, head) evenly and keeps a
  copy of every vector (norms, biases) and of routers on each; the KV cache splits by KV heads (each GPU
  holds ceil(kv_heads / N); MLA's latent cache is one per GPU), recurrent states by their layers' heads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Literal

from .accelerators import RUNTIME_RESERVE_SOURCE, memory_sizes
from .llamacpp import LlamaCppMemory
from .results import ModelInfo, Result
from .spec import Attention, DenseFfn, Layer, ModelSpec, MoeFfn
from .storage import Scheme, Stored, layout, parameter_layout
from .structure import (
    attended_keys,
    attention_kv_elements,
    encoder_positions,
    generating_layers,
    indexer_reach,
    layer_positions,
)
from .tensors import assemble, layer_indices, layer_tensors, lm_head_rows, model_tensors, stored_layer
from .units import DTYPE_BYTES
from .values import Value, field_values

Optimizer = Literal["adamw", "adamw-8bit", "sgd"]
Recompute = Literal["none", "selective", "full"]

# Accelerators as people name them → memory in bytes, from the one accelerator table (ffncalc/accelerators.py:
# the size the driver reports where sourced, else the vendor's GB figure as GiB).
ACCELERATORS: dict[str, int] = memory_sizes()
TENSOR_PARALLEL = (1, 2, 4, 8, 16, 32, 64)

# `dtype`: a what-if for every weight. Plain dtypes store each element in it; the quantized ones quantize
# every linear weight with the scheme named, the rest staying in BF16.
WHAT_IF: dict[str, tuple[str, Scheme | None]] = {
    "fp32": ("F32", None),
    "bf16": ("BF16", None),
    "fp16": ("F16", None),
    "fp8": ("BF16", Scheme("fp8", bits=8, block=(128, 128))),  # block-scaled FP8, as DeepSeek and Qwen publish
    "int8": ("BF16", Scheme("bitsandbytes_8bit", bits=8)),  # LLM.int8: int8 weights and a scale per row
    "int4": ("BF16", Scheme("gptq", bits=4, group_size=128)),  # GPTQ-style: int4, a scale and zero per 128 inputs
    "nf4": ("BF16", Scheme("bitsandbytes_4bit", bits=4)),  # bitsandbytes 4-bit: blocks of 64 with an absmax
    "mxfp4": ("BF16", Scheme("mxfp4-all", bits=4)),  # 4-bit values, one UE8M0 scale per 32
}


# Element types a KV cache or an activation can be held in: floats (an FP8 cache is E4M3 or E5M2; E8M0 is a
# scale format, not a value type).
CACHE_DTYPES = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2")
COMPUTE_DTYPES = ("F32", "F16", "BF16")


class WeightBytes(Result):
    """The weights as stored: bytes in total, by dtype and by component, and what is left unquantized."""

    dtype: str  # the dtype of what is not quantized
    quantization: str | None
    bytes: int
    by_dtype: dict[str, int]
    by_component: dict[str, int]
    unquantized_linear_bytes: int  # linear weights a quantization scheme leaves as they are


class CacheLayer(Result):
    """One kind of layer's cache: how many layers, what each caches per token, and at most how many tokens."""

    kind: str  # "attention", "sliding attention (window 4096)", "MLA latent", "cross-attention", "mixer state"
    layers: int
    elements_per_token: int  # per layer; 0 for a mixer's state, which does not grow
    tokens: int  # cached tokens at the context (capped by a window or chunk)
    fixed_elements: int  # per layer and sequence, whatever the context (a mixer's state)
    bytes: int  # all these layers, at the context and batch


class KvCache(Result):
    """The KV cache and recurrent state at a context and batch."""

    dtype: str
    context: int
    batch: int
    bytes_per_token: int  # one more token of one sequence, at a context past every window
    bytes: int
    layers: list[CacheLayer]


class Activations(Result):
    """The largest activation buffer of one forward, and the formula it comes from."""

    bytes: int
    formula: str


class AcceleratorFit(Result):
    """Whether the model fits one accelerator, and how many it needs with tensor parallelism."""

    name: str
    memory: int
    fits_on_one: bool
    tensor_parallel: int | None  # the fewest GPUs (a power of two) across which it fits; None beyond 64
    per_gpu_bytes: int | None


class Training(Result):
    """Training memory: weights, gradients and optimizer states for the whole model, and per GPU under tensor
    parallelism and ZeRO, and the activations of one micro-batch (per GPU); per_gpu = the per-GPU rows + activations."""

    optimizer: Optimizer
    recompute: Recompute
    attention: Literal["flash", "eager"]
    gpus: int  # data_parallel · tensor_parallel
    data_parallel: int  # the ranks ZeRO shards across
    tensor_parallel: int  # the ranks each matrix and the activations between norms are split across
    sequence_parallel: bool  # the activations of norms and dropouts split across the tensor-parallel ranks too
    zero_stage: int
    micro_batch: int  # sequences per GPU per step (the global batch is micro_batch · gpus · accumulation steps)
    trainable_parameters: int  # all of them, or LoRA's adapters
    trainable_parameters_per_rank: int  # one tensor-parallel rank's share: matrices split, vectors copied
    lora_rank: int | None
    weights: int  # whole model (16-bit; with LoRA the frozen base as stored + 16-bit adapters)
    gradients: int  # whole model
    optimizer_states: int  # whole model
    activations: int  # per GPU: one micro-batch, or with a layout the micro-batches its busiest rank holds
    activations_formula: str
    weights_per_gpu: int
    gradients_per_gpu: int
    optimizer_states_per_gpu: int
    per_gpu: int
    # The layout counted (layouts.training_layout, as `train` counts it; None with another optimizer, eager
    # attention or LoRA): tp, pp, cp, ep, dp, vpp, micro_batch, global_batch; the busiest pipeline rank, whose
    # memory the per-GPU figures are, and the micro-batches' worth of its layers' activations it holds.
    layout: dict[str, int] | None = None
    recompute_modules: list[str] | None = None  # with selective recomputation, the modules (Megatron-LM's names)
    busiest_rank: int | None = None
    micro_batches_in_flight: float | None = None


KvKind = Literal["full", "sliding", "chunked", "mla", "mamba"]


class KvGroup(Result):
    """Layers of one KV-cache spec as the engine groups them: the spec, its layers, groups and blocks per request."""

    kind: KvKind
    window: int | None  # sliding window or attention chunk, tokens
    layers: int
    groups: int  # groups of layers_per_group layers (the last padded)
    page_bytes: int  # one block of one layer, after vLLM unifies page sizes (the mean, where widths differ)
    block_size: int
    blocks_per_request: int  # per group, for one request of the context


class EngineReport(Result):
    """What the engine computes from the memory it has for the KV cache: blocks, tokens and concurrency."""

    engine: str
    version: str  # the version modelled, or "" for the source cited
    source: str
    budget_bytes: int  # KV-cache memory per GPU
    budget_given: bool  # --kv-budget (as the engine printed it), not estimated
    total_memory: int | None  # the accelerator's memory, when the budget is estimated
    gpu_memory_utilization: float | None
    weights_bytes: int | None  # per GPU, when estimated
    activation_peak_bytes: int | None  # estimated peak of the profiling forward
    runtime_reserve_bytes: int | None
    max_num_batched_tokens: int
    max_num_batched_tokens_source: str
    tensor_parallel: int
    block_size: int
    layers_per_group: int
    groups: list[KvGroup]
    num_blocks: int
    kv_capacity_tokens: int
    context: int
    max_concurrency: float
    max_context: int  # the longest context one request can hold
    notes: list[str]
    pipeline_parallel: int = 1  # stages, each its own budget and layers; the figures are the limiting stage's
    limiting_stage: int | None = None  # with stages: the one (from 1) whose blocks every stage keeps (vLLM's min)
    disaggregation: EngineDisaggregation | None = None


class EngineDisaggregation(Result):
    """`disaggregate` P:D under an engine: the GPUs split into a prefill pool and a decode pool of whole copies of
    the layout; the decode pool holds the requests' caches, and each request's prompt cache moves once."""

    prefill_gpus: int
    decode_gpus: int
    replica_gpus: int  # GPUs one copy spans (tensor × pipeline parallel)
    prefill_replicas: int
    decode_replicas: int
    decode_requests: float  # requests of the context the decode pool holds at once: decode copies × max_concurrency
    kv_bytes_per_request: int  # the context's cache of one sequence, every layer, once: what moves from pool to pool


class Solved(Result):
    """`solve`: the largest context, batch or concurrency that fits, with and without the engine's budget."""

    what: str  # "ctx", "batch" or "concurrency"
    value: int | float  # the largest that fits (concurrency unrounded, as vLLM prints it); 0 when nothing does
    without_engine: int  # the largest whole value for which weights + KV cache + activations fit the memory
    memory: int  # the memory per GPU compared against (after the runtime reserve)
    how: str
    gpu: str  # the accelerator asked about
    fits: bool  # False: not even one token of one sequence fits (the weights alone, or the engine's cache)
    limit: int | None = None  # ctx: the model's own context limit, where the answer stops at it


class MemoryReport(ModelInfo):
    """memory's JSON document: bytes of everything that must be in memory, and where it fits."""

    weights: WeightBytes
    kv_cache: KvCache
    activations: Activations
    total_inference: int
    gpus: int
    pipeline_parallel: int = 1  # stages the layers are split into, each over `gpus`: per_gpu_inference is the busiest's
    per_gpu_inference: int
    replicated: list[str]
    accelerators: list[AcceleratorFit]
    runtime_reserve: int  # subtracted from each accelerator's memory before "fits"
    needed_per_gpu: int  # what the question needs on each GPU: training's per_gpu with --train, else inference's
    asked: str | None = None  # the accelerator the question names (--gpu or --gpu-memory), among `accelerators`
    training: Training | None
    engine: EngineReport | None = None
    solved: Solved | None = None
    conventions: list[str]
    llamacpp: LlamaCppMemory | None = None  # a GGUF: llama.cpp's KV cache and GPU/CPU split

    @property
    def exit_code(self) -> int:
        """1 when the question has no answer that fits (`solve` finds nothing that fits, or the engine cannot hold
        one request and would refuse to start), as verify exits 1 for a checkpoint that is not what it says."""
        if self.solved is not None and not self.solved.fits:
            return 1
        return 1 if self.engine is not None and self.engine.max_concurrency < 1 else 0


# --- weights ---------------------------------------------------------------------------------


Layout = list[tuple[Stored, int]]  # a stored tensor, and how many layers store one like it


def weight_layout(spec: ModelSpec, dtype: str, scheme: Scheme | None) -> Layout:
    """Every parameter tensor as stored in DTYPE, quantized where SCHEME quantizes; identical layers laid out once.

    Memory needs sizes, not names: a layer repeated N times is laid out for its first index and counted N
    times (linear in distinct layers, not in tensors). A scheme whose patterns may name single layers
    (``Scheme.names_layers``) is laid out tensor by tensor, since they decide by name.
    """
    if scheme is not None and scheme.names_layers:
        return [(tensor, 1) for tensor in parameter_layout(spec, dtype, scheme)]
    grouped: Layout = [(tensor, 1) for tensor in layout(assemble(model_tensors(spec)), dtype, scheme)]
    first_and_count: dict[Layer, list[int]] = {}
    for index, layer in layer_indices(spec.layers):
        first_and_count.setdefault(layer, [index, 0])[1] += 1
    for layer, (index, count) in first_and_count.items():
        tensors = stored_layer(layer, index)
        grouped += [(tensor, count) for tensor in layout(tensors, dtype, scheme)]
    return grouped


def stage_weight_layout(stage: ModelSpec, dtype: str, scheme: Scheme | None, first: bool, last: bool) -> Layout:
    """A pipeline stage's stored tensors (STAGE: serving_layout.stage_specs' spec of it): its layers, and of the
    tensors outside the layers the input embedding and everything else before the layers on the first stage, the
    final norm and the head on the last, a tied table on both (vLLM's LlamaModel makes embed_tokens on the first rank
    or, tied, on the last, and norm and lm_head on the last; elsewhere a PPMissingLayer holding nothing)."""
    stored = weight_layout(stage, dtype, scheme)
    if first and last:
        return stored
    outside = {tensor.name for tensor in layout(assemble(model_tensors(stage)), dtype, scheme)}
    tied = stage.tie_word_embeddings and stage.lm_head

    def held(tensor: Stored) -> bool:
        if tensor.name not in outside:
            return True
        if tensor.component == "lm_head" or tensor.part == "final_norm":
            return last
        if tensor.component == "embedding" and tied and last:
            return True
        return first

    return [(tensor, count) for tensor, count in stored if held(tensor)]


def weight_bytes(stored: Layout, dtype: str, scheme: Scheme | None) -> WeightBytes:
    """Σ bytes of the stored tensors, by dtype and by component."""
    by_dtype: dict[str, int] = {}
    by_component: dict[str, int] = {}
    for tensor, count in stored:
        by_dtype[tensor.dtype] = by_dtype.get(tensor.dtype, 0) + tensor.bytes * count
        by_component[tensor.component] = by_component.get(tensor.component, 0) + tensor.bytes * count
    unquantized = 0
    if scheme is not None:
        quantized = {t.of or t.name for t, _ in stored if t.role == "quantization" or t.of}
        unquantized = sum(
            t.bytes * count
            for t, count in stored
            if len(t.shape) >= 2
            and t.name not in quantized
            and t.role == "parameter"
            and not t.of
            and t.component != "embedding"
        )
    return WeightBytes(
        dtype=dtype,
        quantization=scheme.method if scheme else None,
        bytes=sum(by_dtype.values()),
        by_dtype=dict(sorted(by_dtype.items())),
        by_component=dict(sorted(by_component.items())),
        unquantized_linear_bytes=unquantized,
    )


# --- the KV cache and recurrent state --------------------------------------------------------------


def kv_elements_per_token(attention: Attention) -> int:
    """The attention's KV elements per token, + a sparse-attention indexer's key (head_dim) when it scores every token's
    key; none for an attention that reads another layer's keys and values (that layer caches them)."""
    if attention.kv_shared:
        return 0
    indexer = (
        attention.indexer.head_dim if attention.indexer is not None and indexer_reach(attention) == (None, 1) else 0
    )
    return attention_kv_elements(attention) + indexer


def cached_tokens(attention: Attention, context: int) -> int:
    """Tokens an attention layer keeps at CONTEXT: all of them, or at most its window or chunk."""
    return context if attention.window is None else min(context, attention.window)


def compressed_caches(attention: Attention) -> list[tuple[str, int, int]]:
    """(what, elements per entry, rate) of each compressed cache: the compressor's entries (head_dim), and the indexer's
    compressed keys (its head_dim); at context n each holds attended_keys(n, None, rate) = n // rate entries."""
    caches = []
    if attention.compressor is not None and not attention.kv_shared:
        caches.append(("compressed keys", attention.compressor.head_dim, attention.compressor.rate))
    scored = indexer_reach(attention)
    if attention.indexer is not None and scored is not None and scored[1] > 1:
        caches.append(("indexer compressed keys", attention.indexer.head_dim, scored[1]))
    return caches


def compressed_elements(attention: Attention, context: int) -> int:
    """Σ over the compressed caches of elements per entry · n // rate."""
    return sum(width * attended_keys(context, None, rate) for _, width, rate in compressed_caches(attention))


class _Kind(Value):
    kind: str
    per_token: int
    tokens: int
    fixed: int
    rate: int = 1  # a compressed cache: one entry per rate tokens (tokens counts entries)
    grows: bool = True  # False: as many tokens whatever the context (a fixed-length encoder's output)
    added: int = 0  # tokens held beside the context's, as many whatever it is (UDOP's page patches after the input)
    # Of the fixed elements, those kept in a type of their own (a recurrent state the config types: Qwen3.5's
    # mamba_ssm_dtype), and that type; the rest are in the cache's.
    own_type: int = 0
    own_dtype: str | None = None


def cross_attention_tokens(spec: ModelSpec, context: int) -> int:
    """The encoder positions a cross-attention layer caches: the fixed number (Whisper's max_source_positions),
    or the context (the encoder's input is as long as the decoder's) and the positions added after it."""
    return encoder_positions(spec, context)


def _cache_kind(layer: Layer, context: int, spec: ModelSpec) -> list[_Kind]:
    kinds = []
    attention = layer.attention
    if attention is not None and not attention.kv_shared:
        if attention.mla is not None:
            name = "MLA latent"
        elif attention.block_sparse is not None:
            name = f"block-sparse attention (blocks of {attention.block_sparse.block_size:,})"
        elif attention.window is None:
            name = "attention"
        else:
            kind = "chunked" if attention.chunked else "two-sided" if attention.two_sided_chunks else "sliding"
            kind = "blocked" if attention.scored_blocks is not None else kind
            name = f"{kind} attention (window {attention.window:,})"
        if indexer_reach(attention) == (None, 1):
            name += " + indexer key"
        if layer.pooling is not None and layer.pooling.keys_times:  # its keys over the pooled input (Funnel's blocks)
            name += f" (input pooled {layer.pooling.keys_times}×)"
        keys = layer_positions(layer.pooling, context)[1]
        kinds.append(_Kind(name, kv_elements_per_token(attention), cached_tokens(attention, keys), 0))
        for what, width, rate in compressed_caches(attention):
            kinds.append(_Kind(f"{what} (1 per {rate:,} tokens)", width, attended_keys(context, None, rate), 0, rate))
    if layer.cross_attention is not None:
        elements = kv_elements_per_token(layer.cross_attention)
        cross_keys, added = spec.cross_attention_keys, spec.encoder_added_positions
        if cross_keys is None and added:  # the input's tokens and the positions after them (UDOP's page patches)
            name = f"cross-attention (encoder output, context + {added:,} positions)"
            kinds.append(_Kind(name, elements, context + added, 0, added=added))
        elif cross_keys is None:  # the encoder's input is as long as the context
            kinds.append(_Kind("cross-attention (encoder output)", elements, context, 0))
        else:
            name = f"cross-attention (encoder output, {cross_keys:,} positions)"
            kinds.append(_Kind(name, elements, cross_keys, 0, grows=False))
    if layer.mixer is not None:
        mixer = layer.mixer
        state = mixer.state_elements + mixer.conv_state_elements
        if mixer.state_dtype is None:
            kinds.append(_Kind(f"{mixer.kind} state", 0, 0, state))
        else:  # the config types its recurrent state: that type, the convolutions' windows the cache's
            name = f"{mixer.kind} state (recurrent part {mixer.state_dtype})"
            kinds.append(_Kind(name, 0, 0, state, own_type=mixer.state_elements, own_dtype=mixer.state_dtype))
    return kinds


def kv_cache(spec: ModelSpec, context: int, batch: int, dtype: str) -> KvCache:
    """Σ over the generating layers of per-token elements × cached tokens (or entries), + fixed states, × batch × dtype bytes."""
    size = DTYPE_BYTES[dtype]
    counted: dict[tuple[str, int, int, int], int] = {}
    rates: dict[str, int] = {}
    fixed_length: set[str] = set()
    added: dict[str, int] = {}
    own_bytes: dict[str, int] = {}  # per layer and sequence, beyond the cache's size, of fixed elements typed apart
    for layer in generating_layers(spec):
        for kind in _cache_kind(layer, context, spec):
            key = (kind.kind, kind.per_token, kind.tokens, kind.fixed)
            counted[key] = counted.get(key, 0) + 1
            rates[kind.kind] = kind.rate
            added[kind.kind] = kind.added
            if kind.own_dtype is not None:
                own_bytes[kind.kind] = kind.own_type * (DTYPE_BYTES[kind.own_dtype] - size)
            if not kind.grows:
                fixed_length.add(kind.kind)
    layers = [
        CacheLayer(
            kind=kind,
            layers=n,
            elements_per_token=per_token,
            tokens=tokens,
            fixed_elements=fixed,
            bytes=n * ((per_token * tokens + fixed) * size + own_bytes.get(kind, 0)) * batch,
        )
        for (kind, per_token, tokens, fixed), n in counted.items()
    ]
    # One more token of one sequence grows only the layers that keep every token (and any positions added beside
    # them), and the compressed caches by an entry every rate tokens: their elements / rate on average (rounded down).
    growing = [
        (cache, rates[cache.kind])
        for cache in layers
        if cache.kind not in fixed_length and (cache.tokens - added[cache.kind] == context or rates[cache.kind] > 1)
    ]
    per_token = int(sum(Fraction(cache.layers * cache.elements_per_token * size, rate) for cache, rate in growing))
    return KvCache(
        dtype=dtype,
        context=context,
        batch=batch,
        bytes_per_token=per_token,
        bytes=sum(layer.bytes for layer in layers),
        layers=layers,
    )


# --- activations -----------------------------------------------------------------------------------


PREFILL_CHUNK = 2048  # tokens of a prompt one forward takes at a time (memory's --chunk; vLLM's 2,048 default)


def activation_size(weight_dtype: str) -> int:
    """Bytes of one activation element: the weights' float dtype, BF16 for quantized weights. An FP8 KV cache does
    not halve the FFN's intermediate."""
    return DTYPE_BYTES[weight_dtype if weight_dtype in COMPUTE_DTYPES else "BF16"]


def inference_need(weights: int, cache: int, activations: int, gpus: int) -> int:
    """What one GPU must hold to serve: its weights and KV cache, and its share of the largest activation buffer,
    which tensor parallelism splits as it splits the FFN's intermediate (column-parallel). The one rule of what
    must fit, for `memory` and `speed` alike; "fits" compares it with the memory less the runtime reserve."""
    return weights + cache + -(-activations // gpus)


def inference_activations(spec: ModelSpec, batch: int, chunk: int, size: int, logits: bool = True) -> Activations:
    """The largest buffer of one forward over a prefill chunk: the FFN's intermediate, the hidden states, or the logits
    (LOGITS false: a pipeline stage before the last, which computes none)."""
    from .spec import MoeFfn

    widest = 0
    for layer in generating_layers(spec):
        ffn = layer.ffn
        if ffn is None:
            continue
        if isinstance(ffn, MoeFfn):  # each token's k experts run on it
            width = ffn.experts_per_token * ffn.expert.intermediate_size * (2 if ffn.expert.gated else 1)
        else:
            width = ffn.intermediate_size * (2 if ffn.gated else 1)
        widest = max(widest, width)
    candidates = {
        f"batch · chunk · FFN intermediate ({widest:,} wide, gate and up for gated FFNs, k experts for MoE) · {size} bytes": batch
        * chunk
        * widest
        * size,
        f"batch · chunk · hidden ({spec.hidden_size:,}) · {size} bytes": batch * chunk * spec.hidden_size * size,
        f"batch · vocab ({lm_head_rows(spec):,}) · 4 bytes: the last token's logits, in float32": batch
        * lm_head_rows(spec)
        * 4
        * logits,
    }
    formula, largest = max(candidates.items(), key=lambda item: item[1])
    return Activations(bytes=largest, formula=formula)


# --- tensor parallelism ----------------------------------------------------------------------------


def weight_shares(stored: Layout) -> dict[tuple[int, str], int]:
    """The stored tensors by how they split: (bytes, "" for a matrix split evenly, or what is copied) → tensors.
    One pass over the layout, shared by every GPU count."""
    shares: dict[tuple[int, str], int] = {}
    for tensor, count in stored:
        how = _tensor_parallel_split(tensor)
        shares[tensor.bytes, how] = shares.get((tensor.bytes, how), 0) + count
    return shares


def _tensor_parallel_split(tensor: Stored) -> str:
    """How tensor parallelism splits a stored tensor: "" for a matrix split evenly, else what is copied."""
    if tensor.part == "router":
        return "routers"
    return "" if len(tensor.shape) >= 2 else "norms and biases (vectors)"


def tensor_parallel_parameters(stored: Layout, ranks: int) -> int:
    """Parameters on one of RANKS tensor-parallel ranks: each matrix's ⌈parameters / ranks⌉, vectors and routers
    whole (copied to every rank)."""
    return sum(
        count * (tensor.parameters if _tensor_parallel_split(tensor) else -(-tensor.parameters // ranks))
        for tensor, count in stored
    )


def per_gpu_weights(shares: dict[tuple[int, str], int], gpus: int) -> tuple[int, list[str]]:
    """Matrices split evenly (rounded up), vectors and routers copied to every GPU; and what is copied."""
    total, replicated = 0, set()
    for (bytes_, how), count in shares.items():
        if how:
            total += bytes_ * count
            replicated.add(how)
        else:
            total += -(-bytes_ // gpus) * count
    return total, sorted(replicated)


def cache_shares(spec: ModelSpec, cache: KvCache) -> dict[tuple[str, int, int], int]:
    """The cache's bytes by how they split: (how, bytes, heads) → layers, where how is "heads" (split by KV heads),
    "copied" (MLA's latent, whole on each GPU) or "even" (a mixer's state, split evenly). One pass over the layers,
    shared by every GPU count (a 16,384-layer model is walked once, not once per count)."""
    shares: dict[tuple[str, int, int], int] = {}
    size = DTYPE_BYTES[cache.dtype]

    def add(how: str, bytes_: int, heads: int = 0) -> None:
        shares[how, bytes_, heads] = shares.get((how, bytes_, heads), 0) + 1

    for layer in generating_layers(spec):
        attention = layer.attention
        if attention is not None:
            elements = kv_elements_per_token(attention) * cached_tokens(attention, cache.context)
            bytes_ = (elements + compressed_elements(attention, cache.context)) * cache.batch * size
            if attention.mla is not None:
                add("copied", bytes_)
            else:
                add("heads", bytes_, attention.num_kv_heads)
        if layer.cross_attention is not None:
            cross = layer.cross_attention
            tokens = cross_attention_tokens(spec, cache.context)
            add("heads", kv_elements_per_token(cross) * tokens * cache.batch * size, cross.num_kv_heads)
        if layer.mixer is not None:
            add("even", (layer.mixer.state_elements + layer.mixer.conv_state_elements) * cache.batch * size)
    return shares


def per_gpu_cache(shares: dict[tuple[str, int, int], int], total: int, gpus: int) -> tuple[int, list[str]]:
    """The KV cache split by KV heads (ceil(kv_heads / N) on each GPU); MLA's latent whole on each."""
    if gpus == 1:
        return total, []
    share = 0
    replicated = set()
    for (how, bytes_, heads), layers in shares.items():
        if how == "copied":
            share += bytes_ * layers
            replicated.add("MLA's latent KV cache")
        elif how == "heads":
            if gpus > heads:
                replicated.add("KV heads (fewer than GPUs: each GPU keeps one)")
            share += bytes_ * math.ceil(heads / gpus) // heads * layers
        else:
            share += -(-bytes_ // gpus) * layers
    return share, sorted(replicated)


# --- training --------------------------------------------------------------------------------------

# Bytes per parameter under mixed precision: 16-bit weights and gradients, and the optimizer's states
# with an fp32 master copy of the weights (Rajbhandari et al. 2020, ZeRO, §3.1: 2 + 2 + 12 for Adam).
OPTIMIZER_BYTES: dict[Optimizer, int] = {"adamw": 4 + 4 + 4, "adamw-8bit": 4 + 1 + 1, "sgd": 4 + 4}
TrainAttention = Literal["flash", "eager"]


def attention_activation_bytes(
    attention: Attention, s: int, b: int, h: int, flash: bool, keys: int | None = None
) -> tuple[int, int]:
    """One attention block's stored activations in 16-bit, Korthikanti et al. 2022 §4.1 generalised to the layer's real
    widths, as (copied on every tensor-parallel rank, split across them): copied, its input 2sbh and the dropout
    mask sbh; split, Q 2sb·(heads·qk), K 2sb·(kv_heads·qk), V 2sb·(kv_heads·v) (MLA: its decompressed heads and
    its latents 2sb·(kv_lora_rank + rope + q_lora_rank)), the output projection's input 2sb·(heads·v), and eager
    attention's softmax 2·a·s·k·b, its dropout mask a·s·k·b and the dropped-out probabilities 2·a·s·k·b (k: the
    keys attended, the window where there is one), or FlashAttention's log-sum-exp, 4·a·s·b (fp32), once per pass
    (DiffLlama's two). GPT's layer (q = k = v = h heads) gives 3sbh + (8sbh + 5as²b). KEYS: the positions its keys
    and values run over where not s (a pooled layer's, Layer.pooling: K and V over them, k at most them)."""
    heads, kv_heads = attention.num_heads, attention.num_kv_heads
    qk, v = attention.qk_head_dim, attention.v_head_dim
    if attention.mla is not None:
        kv_heads = heads
        latents = attention.mla.kv_lora_rank + attention.mla.qk_rope_head_dim + (attention.mla.q_lora_rank or 0)
    else:
        latents = 0
    values = 0 if attention.values_are_keys else kv_heads * v
    positions = s if keys is None else keys
    widths = heads * qk + heads * v + latents
    kv_widths = kv_heads * qk + values
    read = positions if attention.window is None else min(positions, attention.window)
    scores = (4 * heads * s * b if flash else 5 * heads * s * read * b) * attention.passes  # each pass its own
    return 2 * s * b * h + s * b * h, 2 * s * b * widths + 2 * positions * b * kv_widths + scores


def ffn_activation_bytes(ffn: DenseFfn | MoeFfn, s: int, b: int, h: int) -> tuple[int, int]:
    """One FFN block's stored activations in 16-bit (Korthikanti et al. §4.1 generalised), as (copied, split): its
    input 2sbh and dropout mask sbh copied; split, per token of every expert that runs on it (MoE: k routed experts
    and the shared ones) the intermediate's activation input and output, 2·2sbf, and the up projection's output
    2sbf where gated. GPT's 4h MLP gives 3sbh + 16sbh."""

    def intermediate(dense: DenseFfn, copies: int) -> int:
        return copies * (3 if dense.gated else 2) * 2 * s * b * dense.intermediate_size

    if isinstance(ffn, MoeFfn):
        inner = intermediate(ffn.expert, ffn.experts_per_token)
        if ffn.shared is not None:
            inner += intermediate(ffn.shared, 1)
    else:
        inner = intermediate(ffn, 1)
    return 2 * s * b * h + s * b * h, inner


def layer_activations(layer: Layer, s: int, b: int, h: int, flash: bool) -> tuple[int, int]:
    """A layer's stored activations as (copied on every tensor-parallel rank, split across them): the inputs of its
    two norms, 4sbh, copied; its attention and FFN as their blocks say; a mixer's input 2sbh copied and its
    projections' outputs, 2sb each, split. GPT's layer: 10sbh copied, 24sbh + 5as²b split (Korthikanti et al.). A
    pooled layer (Layer.pooling) over the positions its queries and keys run over for s."""
    s, keys = layer_positions(layer.pooling, s)  # a pooled layer's queries and keys (Layer.pooling)
    copied, split = 4 * s * b * h, 0
    blocks = []
    if layer.attention is not None:
        blocks.append(attention_activation_bytes(layer.attention, s, b, h, flash, keys))
    if layer.mixer is not None:
        blocks.append((2 * s * b * h, sum(2 * s * b * p.out_features for p in layer.mixer.projections)))
    if layer.ffn is not None:
        blocks.append(ffn_activation_bytes(layer.ffn, s, b, h))
    for block_copied, block_split in blocks:
        copied, split = copied + block_copied, split + block_split
    return copied, split


def lora_parameters(spec: ModelSpec, rank: int) -> int:
    """Σ over the attention and FFN projections (every routed expert's too; not routers) of rank · (in + out)."""
    total = 0
    for layer in generating_layers(spec):
        for tensor in layer_tensors(layer):
            if tensor.component not in ("attention", "ffn") or tensor.part == "router" or len(tensor.shape) < 2:
                continue
            *stacked, rows, columns = tensor.shape
            total += math.prod(stacked) * tensor.copies * rank * (rows + columns)
    return total


def training_memory(
    spec: ModelSpec,
    stored: Layout,
    context: int,
    batch: int,
    optimizer: Optimizer,
    recompute: Recompute,
    data_parallel: int,
    zero_stage: int,
    attention: TrainAttention = "flash",
    lora_rank: int | None = None,
    frozen_weights: int = 0,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
) -> Training:
    """Weights 2Ψ + gradients 2Ψ + optimizer states (Adam 12Ψ) of one tensor-parallel rank's share Ψ (matrices split
    across TENSOR_PARALLEL ranks, vectors and routers copied), sharded by ZeRO stage over DATA_PARALLEL ranks, + the
    activations of one micro-batch on each GPU.

    Activations per layer (s tokens, micro-batch b, hidden h, 16-bit): layer_activations, Korthikanti et al. 2022
    ("Reducing Activation Recomputation in Large Transformer Models", eq. 1: sbh·(34 + 5as/h) for GPT's layer; with
    t-way tensor parallelism sbh·(10 + 24/t + 5as/(ht)), eq. 2; with sequence parallelism too sbh·(34/t + 5as/(ht)),
    eq. 4) generalised to the layer's real attention and FFN; FlashAttention (the default) stores no s × k scores;
    selective recomputation drops them too (the paper's 34sbh); full recomputation keeps each layer's input,
    2sbh (÷ t with sequence parallelism). Plus the logits, 4·s·b·vocab (float32), split across the tensor-parallel
    ranks as Megatron's vocabulary-parallel output layer splits them. Per GPU: ⌈(copied · (1, or t with sequence
    parallelism … ÷ t) + split) ÷ t⌉.
    With LORA_RANK: the base weights frozen as stored (FROZEN_WEIGHTS bytes, no gradients, no states); the adapters
    (lora_parameters) trained in mixed precision as above; their extra activations, 2sbr per adapter, are left out.
    """
    t = tensor_parallel
    if lora_rank is None:
        trained = sum(tensor.parameters * count for tensor, count in stored)
        per_rank = tensor_parallel_parameters(stored, t)
    else:  # LoRA under tensor parallelism is refused before this (api.MemoryOptions.checked)
        trained = per_rank = lora_parameters(spec, lora_rank)
    frozen = 0 if lora_rank is None else frozen_weights
    weights, gradients, states = frozen + 2 * trained, 2 * trained, OPTIMIZER_BYTES[optimizer] * trained
    rank_weights, rank_gradients = frozen + 2 * per_rank, 2 * per_rank
    rank_states = OPTIMIZER_BYTES[optimizer] * per_rank
    s, b, h = context, batch, spec.hidden_size
    copied, split = 0, 4 * s * b * lm_head_rows(spec)
    for layer in generating_layers(spec):
        if recompute == "full":
            copied += 2 * s * b * h
        else:
            flash = attention == "flash" or recompute == "selective"
            layer_copied, layer_split = layer_activations(layer, s, b, h, flash)
            copied, split = copied + layer_copied, split + layer_split
    activations = -(-(copied * (1 if sequence_parallel else t) + split) // t)
    if recompute == "full":
        formula = "Σ layers 2·s·b·h + 4·s·b·vocab (Korthikanti et al. 2022, full recomputation)"
    elif attention == "eager" and recompute == "none":
        formula = (
            "Σ layers Korthikanti et al. 2022 eq. 1 with the layer's real widths, eager attention's a·s·k scores "
            "kept (5·a·s·k·b) + 4·s·b·vocab"
        )
    else:
        formula = (
            "Σ layers Korthikanti et al. 2022 eq. 1 with the layer's real widths, no s × k scores stored "
            f"({'FlashAttention' if recompute == 'none' else 'selective recomputation'}: 4·a·s·b of log-sum-exp) "
            "+ 4·s·b·vocab"
        )
    if t > 1:
        formula += (
            f"; over {t} tensor-parallel ranks: norms', dropouts' and blocks' inputs "
            + ("split too (sequence parallelism, eq. 4)" if sequence_parallel else "copied on each (eq. 2)")
            + ", the rest split"
        )
    n = data_parallel
    shard = {0: (1, 1, 1), 1: (1, 1, n), 2: (1, n, n), 3: (n, n, n)}[zero_stage]
    weights_per_gpu, gradients_per_gpu = -(-rank_weights // shard[0]), -(-rank_gradients // shard[1])
    states_per_gpu = -(-rank_states // shard[2])
    return Training(
        optimizer=optimizer,
        recompute=recompute,
        attention=attention,
        gpus=n * t,
        data_parallel=n,
        tensor_parallel=t,
        sequence_parallel=sequence_parallel,
        zero_stage=zero_stage,
        micro_batch=batch,
        trainable_parameters=trained,
        trainable_parameters_per_rank=per_rank,
        lora_rank=lora_rank,
        weights=weights,
        gradients=gradients,
        optimizer_states=states,
        activations=activations,
        activations_formula=formula,
        weights_per_gpu=weights_per_gpu,
        gradients_per_gpu=gradients_per_gpu,
        optimizer_states_per_gpu=states_per_gpu,
        per_gpu=weights_per_gpu + gradients_per_gpu + states_per_gpu + activations,
    )


# --- the report ------------------------------------------------------------------------------------

CONVENTIONS = [
    "bytes as exact integers; GB = 10^9 bytes, GiB = 2^30 bytes, in every option and label; accelerators by product "
    "name, with the memory their driver reports where sourced (an H100 SXM, sold as '80GB': 81,559 MiB), else their "
    "vendor's figure in GiB, before runtime overhead",
    "weights as the checkpoint stores them (dtype, quantization_config), or as `dtype` asks; a tied head once",
    "KV cache per layer per token: kv_heads · (qk_head_dim + v_head_dim), MLA: kv_lora_rank + qk_rope_head_dim, "
    "capped at the window or chunk; none for a layer that reads another layer's KV; mixers: recurrent state and "
    "conv windows, whatever the context, in the cache's type (a recurrent state the config types, as Qwen3.5's "
    "mamba_ssm_dtype does, in that type)",
    "tensor parallelism: matrices split evenly, vectors and routers copied; KV split by KV heads, MLA's latent copied",
    f"fits: after the runtime reserve on each GPU, {RUNTIME_RESERVE_SOURCE} (`runtime_reserve` to set it)",
]
# With pipeline stages (inference).
STAGES_CONVENTION = (
    "pipeline parallelism: the layers split into stages as vLLM's get_pp_indices splits them, each over the "
    "tensor-parallel GPUs; the input table on the first stage, the final norm and the head (and a tied table) on "
    "the last, the logits' buffer there only; per GPU the busiest stage"
)
# Only for models whose layers cache keys that are their values, or compressed keys.
COMPRESSED_CONVENTION = (
    "keys that are also the values are cached once; compressed keys: n // rate entries of head_dim (and the "
    "indexer's), the tokens still being pooled not counted"
)


def count_memory(
    spec: ModelSpec,
    info: ModelInfo,
    *,
    weight_dtype: str,
    scheme: Scheme | None,
    context: int,
    batch: int,
    kv_dtype: str,
    chunk: int,
    gpus: int,
    accelerators: dict[str, int],
    train: bool = False,
    optimizer: Optimizer = "adamw",
    recompute: Recompute = "none",
    zero_stage: int = 0,
    data_parallel: int = 1,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    layout_training: Callable[[Training], Training] | None = None,
    reserve: int = 0,
    attention: TrainAttention = "flash",
    lora_rank: int | None = None,
    asked: str | None = None,
    pipeline_parallel: int = 1,
) -> MemoryReport:
    """Weights + KV cache + activations for inference, per GPU over GPUS; and with TRAIN, training memory.

    "Where it fits" compares each accelerator's memory less RESERVE (the runtime's own) with the inference figure per
    GPU under tensor parallelism over GPUS, or with TRAIN the training figure per GPU (TENSOR_PARALLEL ranks, with
    SEQUENCE_PARALLEL or not, times DATA_PARALLEL ranks ZeRO shards across), which then only says whether one GPU
    holds it. LAYOUT_TRAINING, where given, replaces the training figures before the fit is judged (a layout's
    busiest pipeline rank, as `train` counts it: layouts.layout_training). PIPELINE_PARALLEL stages (inference):
    per GPU, the busiest stage's weights, cache and activations over its GPUS (stage_weight_layout)."""
    stored = weight_layout(spec, weight_dtype, scheme)
    weights = weight_bytes(stored, weight_dtype, scheme)
    cache = kv_cache(spec, context, batch, kv_dtype)
    activations = inference_activations(spec, batch, min(chunk, context), activation_size(weight_dtype))
    total = weights.bytes + cache.bytes + activations.bytes

    shares = cache_shares(spec, cache)
    weights_split = weight_shares(stored)

    stages = [(weights_split, shares, cache.bytes, activations.bytes)]
    if pipeline_parallel > 1:
        stages = pipeline_stages(spec, pipeline_parallel, weight_dtype, scheme, context, batch, kv_dtype, chunk)

    @functools.cache
    def per_gpu(n: int) -> tuple[int, list[str]]:
        busiest: tuple[int, list[str]] = (0, [])
        for stage_weights, stage_cache, cache_total, stage_activations in stages:
            w, copied = per_gpu_weights(stage_weights, n)
            c, copied_cache = per_gpu_cache(stage_cache, cache_total, n)
            busiest = max(busiest, (inference_need(w, c, stage_activations, n), copied + copied_cache))
        return busiest

    per_gpu_total, replicated = per_gpu(gpus) if gpus > 1 or pipeline_parallel > 1 else (total, [])
    training = None
    if train:
        training = training_memory(
            spec, stored, context, batch, optimizer, recompute, data_parallel, zero_stage, attention, lora_rank,
            frozen_weights=weights.bytes, tensor_parallel=tensor_parallel, sequence_parallel=sequence_parallel,
        )  # fmt: skip
        if layout_training is not None:
            training = layout_training(training)
    rows = []
    for name, memory in accelerators.items():
        usable = memory - reserve
        if training is not None:
            fits = training.per_gpu <= usable
            needed: tuple[int | None, int | None] = (training.gpus, training.per_gpu) if fits else (None, None)
            rows.append(
                AcceleratorFit(
                    name=name, memory=memory, fits_on_one=fits, tensor_parallel=needed[0], per_gpu_bytes=needed[1]
                )
            )
            continue
        needed = next(((n, per_gpu(n)[0]) for n in TENSOR_PARALLEL if per_gpu(n)[0] <= usable), (None, None))
        rows.append(
            AcceleratorFit(
                name=name,
                memory=memory,
                fits_on_one=total <= usable,
                tensor_parallel=needed[0],
                per_gpu_bytes=needed[1],
            )
        )
    return MemoryReport(
        **field_values(info),
        weights=weights,
        kv_cache=cache,
        activations=activations,
        total_inference=total,
        gpus=gpus,
        pipeline_parallel=pipeline_parallel,
        per_gpu_inference=per_gpu_total,
        replicated=replicated,
        accelerators=rows,
        runtime_reserve=reserve,
        needed_per_gpu=training.per_gpu if training is not None else per_gpu_total,
        asked=asked,
        training=training,
        conventions=CONVENTIONS
        + _compressed_conventions(spec)
        + ([STAGES_CONVENTION] if pipeline_parallel > 1 else []),
    )


Shares = tuple[dict[tuple[int, str], int], dict[tuple[str, int, int], int], int, int]


def pipeline_stages(
    spec: ModelSpec, stages: int, dtype: str, scheme: Scheme | None, context: int, batch: int, kv_dtype: str, chunk: int
) -> list[Shares]:
    """Each pipeline stage's (weight shares, cache shares, cache bytes, activation bytes): its own layers, the
    tensors outside them where vLLM keeps them (stage_weight_layout), the logits on the last stage only."""
    from .serving_layout import stage_specs

    found = []
    parts = stage_specs(spec, stages)
    for index, stage in enumerate(parts):
        first, last = index == 0, index == len(parts) - 1
        stage_cache = kv_cache(stage, context, batch, kv_dtype)
        found.append(
            (
                weight_shares(stage_weight_layout(stage, dtype, scheme, first, last)),
                cache_shares(stage, stage_cache),
                stage_cache.bytes,
                inference_activations(stage, batch, min(chunk, context), activation_size(dtype), logits=last).bytes,
            )
        )
    return found


def _compressed_conventions(spec: ModelSpec) -> list[str]:
    attentions = [layer.attention for layer in generating_layers(spec) if layer.attention is not None]
    return [COMPRESSED_CONVENTION] if any(a.compressor or a.values_are_keys for a in attentions) else []
