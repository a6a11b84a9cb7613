"""Serving engines: the KV-cache capacity, block count and maximum concurrency vLLM and SGLang compute for a model.

Each function follows the engine's own source, cited beside it; figures are exact integers where the engine's are
(blocks, tokens) and a float where the engine prints one (vLLM's maximum concurrency, unrounded here).

vLLM (the v1 engine; ``VLLM_SOURCE``):
- every KV-caching layer has a spec: full attention, sliding window, chunked local attention, MLA, or Mamba-style
  state; a spec's page is one block of ``block_size`` tokens of one layer (``kv_cache_interface.py``);
- layers of one spec share a block table; a model with several specs (a hybrid) is split into groups of equal
  layer count, one page size for all (attention's block size is raised until its page holds a Mamba state, and
  the state's page padded to it), and ``num_blocks = available // page // layers_per_group``
  (``kv_cache_utils.py``: ``_get_kv_cache_groups_uniform_page_size``, ``get_num_blocks``);
- "GPU KV cache size: N tokens" is ``num_blocks // groups × block_size``; "Maximum concurrency for L tokens per
  request" is ``num_blocks / Σ groups' blocks for one request of L tokens`` (a sliding window needs only
  ``window − 1 + max_num_batched_tokens`` tokens and one block more, a Mamba state one block);
- tensor parallelism: each GPU holds ``max(1, kv_heads // tp)`` KV heads; MLA's latent is one head on every GPU.

SGLang (``SGLANG_SOURCE``) differs: its pool is token-granular (page size 1 by default), sized by
``cell_size = Σ layers kv_heads_per_gpu · head_dim · 2 · bytes`` (MLA: ``(kv_lora_rank + qk_rope_head_dim) · layers
· bytes``), ``max_total_num_tokens = rest_memory // cell_size``, with ``rest_memory`` what is free after loading
less ``total · (1 − mem_fraction_static)``; it has no grouping, no per-request block rounding and no sliding-window
saving in that formula (sliding-window and Mamba hybrids get separate pools there, which ffncalc does not model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import ClassVar, Literal

from .errors import UsageError
from .footprint import EngineReport, KvGroup, KvKind
from .spec import Layer, ModelSpec
from .structure import generating_layers
from .units import DTYPE_BYTES
from .values import Value

VLLM_SOURCE = "vllm-project/vllm @ 001cabc1 (main, 2026): vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py"
VLLM_HYBRID_SOURCE = (
    "vllm-project/vllm vllm/model_executor/models/config.py HybridAttentionMambaModelConfig.verify_and_update_config"
)
# Qwen3.5's recurrent state in the config's mamba_ssm_dtype (mamba_ssm_cache_dtype "auto" takes it), the convolution's
# window in the model's dtype (vllm/model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_dtype).
VLLM_QWEN3_5_SOURCE = "vllm-project/vllm vllm/model_executor/models/config.py Qwen3_5ForConditionalGenerationConfig"
VLLM_DEFAULTS_SOURCE = "vllm-project/vllm vllm/engine/arg_utils.py get_batch_defaults (OPENAI_API_SERVER)"
SGLANG_SOURCE = "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py profile_max_num_token"
# PR #29303 ("Better layer padding strategy for gpt-oss eagle", merged 2025-11-24) added the 1.5× rule to the group
# size; before it the group size was always the smallest layer count. First released in v0.12.0 by date (the
# release tag itself was not read).
VLLM_GROUP_RULE_SINCE = (0, 12)
VLLM_OLDEST = (0, 10)  # the hybrid KV-cache manager this arithmetic models (v1 engine, Mamba groups) starts here

Engine = Literal["none", "vllm", "sglang"]
Solve = Literal["ctx", "batch", "concurrency"]

VLLM_BLOCK_SIZE = 16  # vllm/config/cache.py: CUDA's default block_size
VLLM_MLA_BLOCK_SIZE = 64  # vllm/platforms/cuda.py: "Forcing kv cache block size to 64 for FlashMLA backend"
VLLM_KERNEL_ALIGNMENT = 16  # attention backends' smallest kernel block size (FlashAttention: MultipleOf(16))
VLLM_GPU_MEMORY_UTILIZATION = Fraction(9, 10)  # vllm/config/cache.py gpu_memory_utilization = 0.9
SGLANG_PAGE_SIZE = 1  # sglang server_args.py page_size default


class EngineVersion(Value):
    """An engine and the version whose arithmetic is modelled ("" for the source cited as current)."""

    engine: Engine
    version: str = ""

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.version.split(".")) if self.version else (99,)


def parse_engine(text: str) -> EngineVersion:
    """'vllm', 'vllm@0.11', 'sglang' or 'none' → the engine and version; anything else is a one-line error."""
    name, at, version = text.strip().lower().partition("@")
    if at and not version:
        raise UsageError(f"`engine` {text[:30]!r}: name a version after '@', e.g. vllm@0.11, or leave '@' out")
    if name not in ("none", "vllm", "sglang"):
        raise UsageError(f"`engine` {text[:30]!r}: use vllm, vllm@VERSION (e.g. vllm@0.11), sglang or none")
    parts = version.split(".")
    if version and not (len(parts) in (2, 3) and all(part.isdigit() and len(part) <= 4 for part in parts)):
        raise UsageError(f"`engine` {text[:30]!r}: a version is MAJOR.MINOR, e.g. vllm@0.11")
    if version and name != "vllm":
        raise UsageError(f"`engine` {text[:30]!r}: only vLLM's arithmetic is modelled by version")
    engine = EngineVersion(name, version)  # type: ignore[arg-type]
    if version and engine.numbers[:2] < VLLM_OLDEST:
        raise UsageError(
            f"`engine` {text[:30]!r}: the KV-cache arithmetic modelled starts at vLLM 0.10 (the v1 engine)"
        )
    return engine


# vLLM serves a float32 checkpoint (or one whose config names no dtype) in the platform's preferred 16-bit type
# with dtype="auto": vllm/config/model.py _resolve_auto_dtype, "Downcast for float32 models", bfloat16 on compute
# capability 8.0 and later (float16 for pooling models) since v0.10.1, float16 before; SGLang in float16
# (python/sglang/srt/configs/model_config.py _get_and_verify_dtype: "Following the common practice, we use float16
# for float32 models"). Both keep a 16-bit checkpoint in its own type.
VLLM_BF16_FOR_FLOAT32_SINCE = (0, 10, 1)


def engine_dtype(version: EngineVersion, weight_dtype: str, encoder_only: bool) -> str:
    """The dtype an engine with dtype="auto" loads WEIGHT_DTYPE weights in (only float32 changes)."""
    if version.engine == "none" or weight_dtype != "F32":
        return weight_dtype
    if version.engine == "sglang" or encoder_only or version.numbers < VLLM_BF16_FOR_FLOAT32_SINCE:
        return "F16"
    return "BF16"


def vllm_default_max_num_batched_tokens(device_memory: int, device_name: str) -> int:
    """`vllm serve`'s default: 8192 on a GPU of ≥ 70 GiB that is not an A100, else 2048 (VLLM_DEFAULTS_SOURCE)."""
    return 8192 if device_memory >= 70 * (1 << 30) and "a100" not in device_name.lower() else 2048


SGLANG_DEFAULTS_SOURCE = "sgl-project/sglang python/sglang/srt/server_args.py _handle_chunked_prefill_size"


def sglang_default_chunked_prefill_size(device_memory: int) -> int:
    """SGLang's default chunked_prefill_size by the GPU's memory: 2,048 under 35 GiB, 8,192 under 160 GiB, else
    16,384 (SGLANG_DEFAULTS_SOURCE: "A10, L40, 4090" / "H100, H200, A100, H20" / "B200, MI300")."""
    mib = device_memory // (1 << 20)
    return 2048 if mib < 35 * 1024 else 8192 if mib < 160 * 1024 else 16384


# --- vLLM's page sizes (kv_cache_interface.py) ----------------------------------------------------------------


def vllm_kv_heads(kv_heads: int, tp: int) -> int:
    """KV heads on one GPU: max(1, kv_heads // tp) (vllm/config/model.py get_num_kv_heads)."""
    return max(1, kv_heads // tp)


def attention_page_bytes(block_size: int, kv_heads: int, head_size: int, head_size_v: int, size: int) -> int:
    """FullAttentionSpec.real_page_size_bytes: block_size · kv_heads · (head_size + head_size_v) · bytes."""
    return block_size * kv_heads * (head_size + head_size_v) * size


def mla_page_bytes(block_size: int, kv_lora_rank: int, qk_rope_head_dim: int, size: int) -> int:
    """MLAAttentionSpec.real_page_size_bytes: block_size · 1 head · (kv_lora_rank + qk_rope_head_dim) · bytes."""
    return block_size * (kv_lora_rank + qk_rope_head_dim) * size


def hybrid_block_size(mamba_page: int, attention_page_per_token: int, alignment: int = VLLM_KERNEL_ALIGNMENT) -> int:
    """attn_block_size = alignment · cdiv(mamba_page, alignment · attention page of one token) (VLLM_HYBRID_SOURCE)."""
    return alignment * -(-mamba_page // (alignment * attention_page_per_token))


class KvCacheSpec(Value):
    """One layer's KV-cache spec, as vLLM's kv_cache_interface.py has one small class per kind: its page for a block
    of tokens, and the blocks one request holds (each spec's max_memory_usage_bytes / page)."""

    kind: ClassVar[KvKind]
    page_per_token: int  # bytes per token of one layer (Mamba: its whole state)
    window: int | None = None  # sliding window or attention chunk, tokens

    def page_bytes(self, block_size: int) -> int:
        return self.page_per_token * block_size

    def blocks_per_request(self, block_size: int, context: int, batched: int) -> int:
        """FullAttentionSpec: cdiv(L, block)."""
        return -(-context // block_size)


class FullAttentionSpec(KvCacheSpec):
    kind: ClassVar[KvKind] = "full"


class MLAAttentionSpec(FullAttentionSpec):
    """One latent "head" of kv_lora_rank + qk_rope_head_dim a token (MLAAttentionSpec)."""

    kind: ClassVar[KvKind] = "mla"


class SlidingWindowSpec(KvCacheSpec):
    kind: ClassVar[KvKind] = "sliding"

    def blocks_per_request(self, block_size: int, context: int, batched: int) -> int:
        """cdiv(min(window − 1 + batched, L), block) + 1."""
        assert self.window is not None
        return -(-min(self.window - 1 + batched, context) // block_size) + 1


class ChunkedLocalAttentionSpec(KvCacheSpec):
    kind: ClassVar[KvKind] = "chunked"

    def blocks_per_request(self, block_size: int, context: int, batched: int) -> int:
        """cdiv(min(chunk + batched, L), block)."""
        assert self.window is not None
        return -(-min(self.window + batched, context) // block_size)


class MambaSpec(KvCacheSpec):
    """A recurrent state: one page whatever the block (mamba_cache_mode "none": no prefix caching)."""

    kind: ClassVar[KvKind] = "mamba"

    def page_bytes(self, block_size: int) -> int:
        return self.page_per_token

    def blocks_per_request(self, block_size: int, context: int, batched: int) -> int:
        return 1


def group_size(layer_counts: list[int], version: EngineVersion) -> int:
    """Layers per KV-cache group: the smallest count of a kind, or the largest where it is under 1.5× the smallest
    (since VLLM_GROUP_RULE_SINCE; _get_kv_cache_groups_uniform_page_size)."""
    smallest, largest = min(layer_counts), max(layer_counts)
    if version.numbers[:2] >= VLLM_GROUP_RULE_SINCE and largest < smallest * 1.5:
        return largest
    return smallest


def num_blocks(available: int, page: int, layers_per_group: int) -> int:
    """get_num_blocks: available // page // layers per group."""
    return max(available // page // layers_per_group, 0)


def capacity_tokens(blocks: int, groups: int, block_size: int) -> int:
    """_report_kv_cache_config's "GPU KV cache size": num_blocks // groups · (smallest) block_size."""
    return blocks // groups * block_size


# --- the report ----------------------------------------------------------------------------------------------


def layer_spec(layer: Layer, tp: int, size: int, state_size: int) -> KvCacheSpec | None:
    """LAYER's KV-cache spec on one of TP GPUs, as vLLM's attention and Mamba layers return theirs (get_kv_cache_spec);
    None for a layer that caches nothing."""
    attention = layer.attention
    if layer.cross_attention is not None:
        raise UsageError("an encoder-decoder's cross-attention cache is not modelled for `engine`; use `engine` none")
    if attention is not None and (attention.compressor is not None or attention.indexer is not None):
        raise UsageError("compressed or indexed sparse attention is not modelled for `engine`; use `engine` none")
    if attention is not None and not attention.kv_shared:
        if attention.mla is not None:
            return MLAAttentionSpec(mla_page_bytes(1, attention.mla.kv_lora_rank, attention.mla.qk_rope_head_dim, size))
        heads = vllm_kv_heads(attention.num_kv_heads, tp)
        value = 0 if attention.values_are_keys else attention.v_head_dim
        page = attention_page_bytes(1, heads, attention.qk_head_dim, value, size)
        if attention.window is None:
            return FullAttentionSpec(page)
        return (ChunkedLocalAttentionSpec if attention.chunked else SlidingWindowSpec)(page, attention.window)
    if layer.mixer is not None:  # MambaSpec.page_size_bytes: Σ each state's elements on one GPU × its dtype's bytes
        mixer = layer.mixer
        recurrent = DTYPE_BYTES[mixer.state_dtype] if mixer.state_dtype is not None else state_size
        return MambaSpec(-(-mixer.state_elements // tp) * recurrent + -(-mixer.conv_state_elements // tp) * state_size)
    return None


class Capacity(Value):
    """What vLLM computes from its KV-cache memory: the block size, the groups of layers, the blocks, the tokens, the
    requests of the context that fit, and the longest context one request may have."""

    block_size: int
    groups: list[KvGroup]
    layers_per_group: int
    num_blocks: int
    tokens: int
    max_concurrency: float
    max_context: int


def vllm_capacity(
    spec: ModelSpec,
    *,
    budget: int,
    context: int,
    kv_size: int,
    state_size: int,
    tp: int,
    batched: int,
    block_size: int | None,
    version: EngineVersion,
) -> Capacity:
    """SPEC's KV cache in BUDGET bytes a GPU, as vLLM lays it out (kv_cache_utils.py)."""
    layers = [found for layer in generating_layers(spec) if (found := layer_spec(layer, tp, kv_size, state_size))]
    if not layers:
        raise UsageError("this model caches nothing per token (no attention, no state); `engine` has nothing to size")
    kinds: dict[KvCacheSpec, int] = {}  # each distinct spec and its layers
    for layer in layers:
        kinds[layer] = kinds.get(layer, 0) + 1
    mamba = [kind for kind in kinds if isinstance(kind, MambaSpec)]
    attention = [kind for kind in kinds if not isinstance(kind, MambaSpec)]
    if block_size is None:
        block_size = VLLM_MLA_BLOCK_SIZE if any(isinstance(k, MLAAttentionSpec) for k in attention) else VLLM_BLOCK_SIZE
    if mamba and attention:  # attention's block grows until its page holds the largest state; states padded to it
        largest_state = max(kind.page_per_token for kind in mamba)
        per_token = max(kind.page_per_token for kind in attention)
        block_size = max(block_size, hybrid_block_size(largest_state, per_token))
    pages = {kind: kind.page_bytes(block_size) for kind in kinds}
    if mamba and attention:
        page = max(pages[kind] for kind in attention)
        pages |= {kind: page for kind in mamba}
    page = max(pages.values())
    blocks_of = {}
    for kind in kinds:
        scale = page // pages[kind]
        if page % pages[kind]:
            raise UsageError("vLLM cannot unify this model's page sizes (one does not divide another); not modelled")
        blocks_of[kind] = block_size * scale  # a smaller page holds more tokens a block (unify_kv_cache_spec_page_size)
    uniform_type = len({(type(kind), kind.window) for kind in kinds}) == 1 and not mamba
    if len(kinds) == 1 or uniform_type:
        # One spec (or one type of differing widths, UniformTypeKVCacheSpecs): one group of every layer, its pages
        # summed; num_blocks = available // Σ pages.
        total_page = sum(kind.page_bytes(block_size) * count for kind, count in kinds.items())
        blocks = budget // total_page
        only = next(iter(kinds))
        per_request = only.blocks_per_request(block_size, context, batched)
        group = KvGroup(
            kind=only.kind, window=only.window, layers=len(layers), groups=1, page_bytes=total_page // len(layers),
            block_size=block_size, blocks_per_request=per_request,
        )  # fmt: skip
        concurrency = blocks / per_request if per_request else math.inf
        longest = _longest(lambda n: only.blocks_per_request(block_size, n, batched), blocks)
        return Capacity(block_size, [group], len(layers), blocks, blocks * block_size, concurrency, longest)
    per_group = group_size(list(kinds.values()), version)
    grouped = {kind: -(-count // per_group) for kind, count in kinds.items()}
    groups = [
        KvGroup(
            kind=kind.kind, window=kind.window, layers=count, groups=grouped[kind], page_bytes=page,
            block_size=blocks_of[kind] if not isinstance(kind, MambaSpec) else context,  # a state's: max_model_len
            blocks_per_request=kind.blocks_per_request(blocks_of[kind], context, batched),
        )
        for kind, count in kinds.items()
    ]  # fmt: skip
    blocks = num_blocks(budget, page, per_group)
    group_count = sum(group.groups for group in groups)
    tokens = capacity_tokens(blocks, group_count, min(group.block_size for group in groups))
    per_request = sum(group.groups * group.blocks_per_request for group in groups)

    def needed(n: int) -> int:
        return sum(grouped[kind] * kind.blocks_per_request(blocks_of[kind], n, batched) for kind in kinds)

    return Capacity(block_size, groups, per_group, blocks, tokens, blocks / per_request, _longest(needed, blocks))


def _longest(blocks_needed: Callable[[int], int], blocks: int) -> int:
    """The largest context whose blocks for one request fit in BLOCKS (vLLM's estimate_max_model_len searches the
    same way, by bisection), capped at 2^40 tokens; 0 when one token does not fit."""
    if blocks_needed(1) > blocks:
        return 0
    low, high = 1, 1 << 40
    while low < high:
        middle = (low + high + 1) // 2
        if blocks_needed(middle) <= blocks:
            low = middle
        else:
            high = middle - 1
    return low


def sglang_cell_size(spec: ModelSpec, tp: int, size: int) -> int:
    """profile_max_num_token's cell_size: kv_heads_per_gpu · head_dim · layers · 2 · bytes (MLA: (kv_lora_rank +
    qk_rope_head_dim) · layers · bytes), one term per attention layer."""
    cell = 0
    for layer in generating_layers(spec):
        attention = layer.attention
        if layer.mixer is not None or (attention is not None and attention.window is not None):
            raise UsageError(
                "SGLang sizes sliding-window and hybrid models with separate pools, which ffncalc does not model; "
                "use `engine` vllm"
            )
        if attention is None or attention.kv_shared:
            continue
        if attention.compressor is not None or attention.indexer is not None or layer.cross_attention is not None:
            raise UsageError("this attention's cache is not modelled for `engine` sglang; use `engine` none")
        if attention.mla is not None:
            cell += (attention.mla.kv_lora_rank + attention.mla.qk_rope_head_dim) * size
        else:  # SGLang's get_num_kv_heads(tp): max(1, kv_heads // tp); head_dim for keys and values alike
            cell += vllm_kv_heads(attention.num_kv_heads, tp) * attention.qk_head_dim * 2 * size
    if cell == 0:
        raise UsageError("this model caches nothing per token; `engine` has nothing to size")
    return cell


def sglang_capacity(cell: int, budget: int, page_size: int = SGLANG_PAGE_SIZE) -> int:
    """max_total_num_tokens = rest_memory // cell_size, rounded down to whole pages."""
    return budget // cell // page_size * page_size


class Budget(Value):
    """The KV-cache memory per GPU: as an engine printed it, or estimated from the accelerator's memory."""

    bytes: int
    given: bool
    total_memory: int | None = None
    utilization: Fraction | None = None
    weights: int | None = None
    activation_peak: int | None = None
    reserve: int | None = None


def estimated_budget(
    engine: Engine, total: int, utilization: Fraction, weights: int, activation_peak: int, reserve: int
) -> Budget:
    """vLLM (gpu_worker.py determine_available_memory): ⌊total · utilization⌋ − weights − the profiling forward's
    activation peak − non-torch memory and CUDA graphs (the reserve); SGLang: ⌊total · mem_fraction_static⌋ −
    weights − the reserve (its activations live in the 1 − mem_fraction_static left out)."""
    requested = math.floor(total * utilization)
    peak = activation_peak if engine == "vllm" else 0
    return Budget(requested - weights - peak - reserve, False, total, utilization, weights, peak, reserve)


def engine_report(
    spec: ModelSpec,
    version: EngineVersion,
    budget: Budget,
    *,
    context: int,
    kv_size: int,
    state_size: int,
    tp: int,
    batched: int,
    batched_source: str,
    block_size: int | None,
) -> EngineReport:
    """The engine's KV-cache figures for BUDGET bytes per GPU (see the module's docstring for each engine)."""
    notes = []
    if budget.bytes <= 0:
        raise UsageError(
            f"no memory is left for the KV cache ({budget.bytes / (1 << 30):,.2f} GiB after weights, activations and "
            "the reserve): use more `tensor_parallel`, a larger `gpu`, or give `kv_budget`"
        )
    if version.engine == "sglang":
        cell = sglang_cell_size(spec, tp, kv_size)
        tokens = sglang_capacity(cell, budget.bytes)
        attention_layers = sum(
            1 for layer in generating_layers(spec) if layer.attention is not None and not layer.attention.kv_shared
        )
        group = KvGroup(
            kind="mla" if any(x.attention and x.attention.mla for x in generating_layers(spec)) else "full",
            window=None, layers=attention_layers, groups=1, page_bytes=cell // attention_layers,
            block_size=SGLANG_PAGE_SIZE, blocks_per_request=context,
        )  # fmt: skip
        notes.append(
            "SGLang prints max_total_num_tokens, not a concurrency: max_concurrency here is ffncalc's tokens / "
            "context (no per-request rounding, as its token pool has none at page size 1)"
        )
        source = SGLANG_SOURCE
        blocks, block, per_group, groups = tokens, SGLANG_PAGE_SIZE, attention_layers, [group]
        concurrency, longest = tokens / context, tokens
    else:
        capacity = vllm_capacity(
            spec, budget=budget.bytes, context=context, kv_size=kv_size, state_size=state_size, tp=tp,
            batched=batched, block_size=block_size, version=version,
        )  # fmt: skip
        block, groups, per_group, blocks = (
            capacity.block_size,
            capacity.groups,
            capacity.layers_per_group,
            capacity.num_blocks,
        )
        tokens, concurrency, longest = capacity.tokens, capacity.max_concurrency, capacity.max_context
        source = VLLM_SOURCE + (f"; grouping as before v{'.'.join(map(str, VLLM_GROUP_RULE_SINCE))}"
                                if version.numbers[:2] < VLLM_GROUP_RULE_SINCE else "")  # fmt: skip
        if any(group.kind == "mamba" for group in groups):
            named = sorted({m.state_dtype for layer in generating_layers(spec) if (m := layer.mixer) and m.state_dtype})
            dtypes = (
                f"recurrent states in {', '.join(named)} as the config's mamba_ssm_dtype says ({VLLM_QWEN3_5_SOURCE}), "
                "convolution windows in the model's dtype"
                if named
                else "states in the model's dtype"
            )
            notes.append(
                f"hybrid: attention's block raised to {block:,} tokens so that its page holds a state "
                f"({VLLM_HYBRID_SOURCE}); {dtypes}, mamba_cache_mode 'none' (no prefix caching)"
            )
        if any(group.kind == "mla" for group in groups) and block_size is None:
            notes.append("MLA: block size 64, as vLLM forces for FlashMLA (`block_size` for another backend)")
    return EngineReport(
        engine=version.engine,
        version=version.version,
        source=source,
        budget_bytes=budget.bytes,
        budget_given=budget.given,
        total_memory=budget.total_memory,
        gpu_memory_utilization=None if budget.utilization is None else float(budget.utilization),
        weights_bytes=budget.weights,
        activation_peak_bytes=budget.activation_peak,
        runtime_reserve_bytes=budget.reserve,
        max_num_batched_tokens=batched,
        max_num_batched_tokens_source=batched_source,
        tensor_parallel=tp,
        block_size=block,
        layers_per_group=per_group,
        groups=groups,
        num_blocks=blocks,
        kv_capacity_tokens=tokens,
        context=context,
        max_concurrency=concurrency,
        max_context=longest,
        notes=notes,
    )
