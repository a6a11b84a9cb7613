"""What a spec's layers read and keep, as facts of the structure that FLOPs, bytes and memory all use.

Which layers a generated token runs, how many keys a token reaches at a context (windows, an indexer's top_k,
compressed entries), and what one attention layer caches per token. ``compute`` and ``memory`` both build on
these; neither needs the other.
"""

from __future__ import annotations

from .spec import Attention, Layer, ModelSpec, Pooling

# How far a layer reaches at context n: (cap, rate) reads min(n // rate, cap) keys; rate 1 for the keys themselves
# (cap: a window or an indexer's top_k; None: the whole context), rate > 1 for compressed entries of rate tokens each.
Reach = tuple[int | None, int]


def generating_layers(spec: ModelSpec) -> list[Layer]:
    """The layers a text token runs: the decoder stack (an encoder-decoder's encoder runs once over the input;
    a multimodal model's towers run once per image), or an encoder-only model's encoder."""
    decoder = [layer for layer in spec.layers if layer.stack == "decoder"]
    return decoder or [layer for layer in spec.layers if layer.stack == "encoder"]


def encoder_positions(spec: ModelSpec, context: int) -> int:
    """The positions an encoder-decoder's encoder runs over, which every cross-attention reads: the fixed number
    (Whisper's max_source_positions), or the context's n input tokens and any positions added after them (UDOP's page
    patches)."""
    if spec.cross_attention_keys is not None:
        return spec.cross_attention_keys
    return context + spec.encoder_added_positions


def attended_keys(context: int, window: int | None, rate: int = 1) -> int:
    """Keys one token reads at context n: min(n // rate, window); rate 1 for the keys themselves (n, or min(n, window)
    in a sliding-window layer), rate > 1 for the entries that each pool rate tokens; window None: no cap."""
    keys = context // rate
    return keys if window is None else min(keys, window)


def attention_reach(attention: Attention) -> tuple[Reach, ...]:
    """Keys a token attends to at context n, as reaches: min(n, window) (an indexer's top_k instead, picking among
    all keys; at most picked_keys of them where a score picks them; at most a middle block's keys where the attention
    is block-sparse), + with a compressor min(n // rate, top_k) of its entries (all n // rate without an indexer)."""
    indexer, compressor = attention.indexer, attention.compressor
    top_k = indexer.top_k if indexer is not None else None
    if compressor is None:
        cap = top_k if indexer is not None else attention.window
        sparse = attention.block_sparse
        for most in (attention.picked_keys, sparse.middle_keys if sparse is not None else None):
            if most is not None:
                cap = most if cap is None else min(cap, most)
        return ((cap, 1),)
    return ((attention.window, 1), (top_k, compressor.rate))


def indexer_reach(attention: Attention) -> Reach | None:
    """Keys an indexer scores at context n: all n, or the n // rate compressed entries; None without one of its own."""
    indexer = attention.indexer
    if indexer is None or indexer.shared:
        return None
    compressor = indexer.compressor or attention.compressor
    return (None, compressor.rate if compressor is not None else 1)


def attention_kv_elements(attention: Attention) -> int:
    """Per layer per token: kv_heads · (qk_head_dim + v_head_dim), kv_heads · qk_head_dim where the keys are the values;
    MLA caches its latent, kv_lora_rank + qk_rope_head_dim."""
    if attention.mla is not None:
        return attention.mla.kv_lora_rank + attention.mla.qk_rope_head_dim
    values = 0 if attention.values_are_keys else attention.v_head_dim
    return attention.num_kv_heads * (attention.qk_head_dim + values)


def layer_positions(pooling: Pooling | None, positions: int) -> tuple[int, int]:
    """(queries, keys) a layer pooled by POOLING (Layer.pooling) runs over for an input of POSITIONS: both POSITIONS
    where it is not pooled."""
    if pooling is None:
        return positions, positions
    return pooling.queries(positions), pooling.keys(positions)


def relative_positions(pooling: Pooling | None, positions: int) -> int:
    """R, the relative positions a relative-shift attention (Attention.relative_shift) projects and scores each query
    against, in a layer pooled by POOLING, for an input of POSITIONS (FunnelAttentionStructure.get_position_embeds and
    relative_pos): 2 · its queries' positions, + its keys' where the layer pools its queries (shift 2), each as the
    position lists are pooled, without the floor of the hidden states' pooling."""
    if pooling is None:
        return 2 * positions
    queries, keys = layer_positions(pooling, positions)
    shifted = pooling.length(positions, pooling.keys_times, floor=False) if queries != keys else 0
    return 2 * pooling.length(positions, pooling.times, floor=False) + shifted
