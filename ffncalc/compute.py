"""Compute per token as a function of context: pure functions from a ``ModelSpec`` to FLOPs and bytes.

Conventions:
- 2 FLOPs per multiply-add; only matrix multiplications count (biases, norms, activations,
  softmax and the embedding lookup are left out: they are O(hidden) per token, not O(hidden²));
- a generated token at context n attends to n keys in a full-attention layer and to
  min(n, window) in a sliding-window layer; each key costs 2 · heads · qk_head_dim for QKᵀ and
  2 · heads · v_head_dim for AV (relative keys, SpeechT5's encoder: 2 · heads · qk_head_dim more, the query
  against the key's distance embedding; an attention run in several passes over the same keys, DiffLlama's two,
  all of it once per pass). Grouped KV heads save memory, not these FLOPs. A layer with
  compressed keys also attends to n // rate compressed entries (at most an indexer's top_k), as
  keys of its own width (``attention_reach``);
- MLA, plain form: scores over qk_nope + qk_rope dims, values over v_head_dim (as written in
  the model); absorbed form (inference engines): scores over kv_lora_rank + qk_rope, values over
  kv_lora_rank. The projections cost the same either way (kv_b is absorbed, not removed);
- an MoE layer costs its router, its experts_per_token routed experts and its shared experts;
- a layer's matmuls that no weight describes (Gemma 3n's AltUp mixing its copies) count under other;
- the output head costs 2 · vocab · hidden per token, tied or not;
- prefill of n tokens: causal by default (token i attends to i keys, capped by the window);
  non-causal charges every token the keys of the last one (n · keys(n)), as torch's
  FlopCounterMode and most papers do. Training is 3 × the forward pass (backward ≈ 2 × forward).
- memory traffic of one decode step (batch 1): every weight a token uses is read once, and the
  KV cache: per layer per token kv_heads · (qk_head_dim + v_head_dim) elements (MLA:
  kv_lora_rank + qk_rope_head_dim), capped at the window for sliding layers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal, NamedTuple

from .accounting import Part, layer_parts, parts_of
from .results import ModelInfo, Result
from .spec import Attention, BlockSparse, Indexer, Layer, Mixer, ModelSpec, Pooling
from .structure import (
    Reach,
    attended_keys,
    attention_kv_elements,
    attention_reach,
    encoder_positions,
    generating_layers,
    indexer_reach,
    layer_positions,
    relative_positions,
)
from .tensors import extra_tensors, lm_head_rows, lm_head_width
from .values import Value, field_names, field_values, replace

MlaForm = Literal["plain", "absorbed"]
Measure = Literal["flops", "bytes"]

FLOPS_PER_MULTIPLY_ADD = 2
TRAINING_MULTIPLIER = 3  # forward + backward (≈ 2 × forward)


# --- the per-model profile: everything that does not depend on the context --------------------


class Blocked(Value):
    """Layers whose window is scored in blocks (Attention.scored_blocks), summed by what shapes their blocks: the
    window, the block, the blocks of keys a block reads, the positions the attention adds (staggered_by), its global
    tokens, and the tokens a summary key stands for (summary_every; 0: none). ``per_key``: 2 · heads · (qk_head_dim +
    v_head_dim); ``summary_projections``: 2 · the k and v weights, what projecting one summary costs; ``summary_making``:
    2 · hidden_size, what adding one token into one summary costs (a one-hot matmul); each summed over the layers."""

    window: int
    block: int
    blocks: int
    staggered_by: int = 0
    global_tokens: int = 0
    summary_every: int = 0
    per_key: int = 0
    summary_projections: int = 0
    summary_making: int = 0

    def summaries(self, positions: int) -> int:
        """The summary keys over POSITIONS: one per summary_every whole tokens."""
        return positions // self.summary_every if self.summary_every else 0

    def padded(self, positions: int) -> int:
        """P_b: the positions the attention runs over (POSITIONS + staggered_by) padded to whole blocks."""
        return -(-(positions + self.staggered_by) // self.block) * self.block


class Positioned(Value):
    """Layers that run over their own positions (Layer.pooling: a pooled input) or score relative positions
    (Attention.relative_shift), summed by their pooling and whether they do: 2 · their weights by what runs them, the
    queries' (q, o), the keys' (k, v), the FFN's and the other matmuls'; their scores per query and key (``per_key``);
    a relative-shift attention's projection per relative position (2 · hidden · heads · qk_head_dim,
    ``relative_projection``), its scores per query and relative position (2 · heads · qk_head_dim, ``relative_per_key``)
    and per query against its token types (``segments``). Their per-position weights are in ContextProfile's fixed parts
    too, as one position through each; their scores are in no slope."""

    pooling: Pooling | None = None
    relative: bool = False
    queries_weights: int = 0
    keys_weights: int = 0
    ffn: int = 0
    other: int = 0
    per_key: int = 0
    relative_projection: int = 0
    relative_per_key: int = 0
    segments: int = 0

    @property
    def per_position(self) -> int:
        """What the fixed parts hold of them: one position through each layer."""
        return self.queries_weights + self.keys_weights + self.ffn + self.other

    def growing(self, context: int) -> int:
        """One query's scores at CONTEXT: its keys (the pooled input's), its relative positions and token types."""
        _, keys = layer_positions(self.pooling, context)
        relative = relative_positions(self.pooling, context) if self.relative else 0
        return self.per_key * keys + self.relative_per_key * relative + self.segments

    def prefill(self, positions: int) -> dict[str, int]:
        """What the layers compute over an input of POSITIONS, by component: their queries, output and FFN over the
        queries' positions, their keys and values over the keys', every query against every key (bidirectional) and
        its R relative positions, and the R positions projected once a layer."""
        queries, keys = layer_positions(self.pooling, positions)
        relative = relative_positions(self.pooling, positions) if self.relative else 0
        return {
            "attention_projections": self.queries_weights * queries
            + self.keys_weights * keys
            + self.relative_projection * relative,
            "attention_scores": queries * (self.per_key * keys + self.relative_per_key * relative + self.segments),
            "ffn": self.ffn * queries,
            "other": self.other * queries,
        }


def is_positioned(layer: Layer) -> bool:
    """The layer runs over its own positions (pooled) or scores relative positions: Positioned counts it."""
    return layer.pooling is not None or (layer.attention is not None and layer.attention.relative_shift)


def _positioned(layers: list[Layer], per_key) -> tuple[Positioned, ...]:
    """The positioned layers (is_positioned), summed by their pooling and relative shift, PER_KEY(attention) each."""
    found: dict[tuple[Pooling | None, bool], dict[str, int]] = {}
    for layer in layers:
        if not is_positioned(layer):
            continue
        attention = layer.attention
        relative = attention is not None and attention.relative_shift
        sums = found.setdefault((layer.pooling, relative), {})
        weights = _active_weights([layer])
        keys = sum(
            part.active_matmul_weights
            for part in layer_parts(layer)
            if part.component == "attention" and part.name in ("k", "v") and part.runs == "every_token"
        )
        costs = {
            "queries_weights": FLOPS_PER_MULTIPLY_ADD * (weights["attention"] - keys),
            "keys_weights": FLOPS_PER_MULTIPLY_ADD * keys,
            "ffn": FLOPS_PER_MULTIPLY_ADD * weights["ffn"],
            "other": FLOPS_PER_MULTIPLY_ADD * weights["other"] + layer.other_flops,
        }
        if attention is not None:
            costs["per_key"] = per_key(attention)
            if relative:
                heads = FLOPS_PER_MULTIPLY_ADD * attention.num_heads * attention.qk_head_dim
                costs["relative_projection"] = heads * attention.hidden_size
                costs["relative_per_key"] = heads
                costs["segments"] = heads * attention.segments
        for name, cost in costs.items():
            sums[name] = sums.get(name, 0) + cost
    return tuple(
        Positioned(pooling=pooling, relative=relative, **sums)
        for (pooling, relative), sums in sorted(
            found.items(), key=lambda item: (item[0][0] is not None, item[0][0] and item[0][0].times, item[0][1])
        )
    )


class ContextProfile(Value):
    """A model reduced to what per-token cost needs: fixed parts, and slopes per attention window.

    ``slopes`` maps a window (None: full attention) to the cost each attended key adds, summed
    over the layers with that window; ``compressed`` maps (rate, cap) to the cost of each compressed
    entry (one per rate tokens) layers attend to, so
    cost(n) = fixed + Σ slope · min(n, window) + Σ slope · min(n // rate, cap).

    ``chunks`` holds, by w, the layers whose two-sided window of 2w + 1 keys is scored in overlapping chunks
    (Attention.two_sided_chunks): (w, QK's cost per key, the values' per key). Their slopes are in ``slopes`` too, at
    window 2w + 1, for what one query reads; a prompt costs what the chunks compute instead (sliding_chunks_flops).
    ``pad_to``: the layers run over the prompt padded to a multiple of it (ModelSpec.encoder_pad_to), except
    ``unpadded_projections`` and ``unpadded_other`` of the fixed parts (what reads the layers' output once the padding
    is dropped: a decoder's cross-attention keys and values, the model-level modules), and the head; only prompts longer
    than ``pad_above`` are padded (ModelSpec.encoder_pad_above).

    ``block_sparse`` holds, by (block_size, random_blocks), the layers whose attention is block-sparse
    (Attention.block_sparse): (block_size, random_blocks, their cost per key). Their slopes are in ``slopes`` too, at
    the keys a middle block's query reads; a prompt costs what the blocks compute instead (block_sparse_flops).

    ``blocks`` holds the layers whose window is scored in blocks (Attention.scored_blocks), as Blocked. Their slopes are
    in ``slopes`` too, for what one query reads; a prompt costs what the blocks compute instead (scored_blocks_flops,
    summary_projection_flops). ``once_projections`` and ``once_ffn``: what a prompt pays once whatever its
    length, the global tokens through their layers' projections and FFN and the staggered positions through the
    projections.
    """

    attention_projections: int
    ffn: int
    lm_head: int
    slopes: tuple[tuple[int | None, int], ...]
    compressed: tuple[tuple[tuple[int, int | None], int], ...] = ()
    mixer: int = 0  # the projections of Mamba-2 / Gated DeltaNet … mixers (matmuls)
    mixer_state: int = 0  # their convolutions and state updates: the same at any context
    other: int = 0  # model-level linears a token runs (OPT's project_in/out)
    cross: int = 0  # cross-attention: the cost of each encoder position a decoder token attends to
    cross_keys: int | None = None  # the encoder positions it attends to when fixed (Whisper); None: the context
    chunks: tuple[tuple[int, int, int], ...] = ()  # (w, QK per key, values per key) of layers scored in chunks
    blocks: tuple[Blocked, ...] = ()  # layers scored in blocks
    once_projections: int = 0
    once_ffn: int = 0
    pad_to: int | None = None
    unpadded_projections: int = 0
    unpadded_other: int = 0
    pad_above: int = 0
    block_sparse: tuple[
        tuple[int, int, int], ...
    ] = ()  # (block_size, random_blocks, cost per key) of block-sparse layers
    cross_added: int = 0  # with the context, the encoder positions after the input's tokens (UDOP's page patches)
    positioned: tuple[Positioned, ...] = ()  # layers pooled or scoring relative positions (Positioned)
    head_positions: int | None = None  # the head's positions in a prefill when fixed (ModelSpec.output_positions)

    @property
    def fixed(self) -> int:
        return self.attention_projections + self.ffn + self.lm_head + self.mixer + self.mixer_state + self.other

    @property
    def cross_slope(self) -> int:
        """What cross-attention adds per token of context: cross, unless the encoder's length is fixed."""
        return self.cross if self.cross_keys is None else 0

    def encoder_positions(self, context: int) -> int:
        """The encoder positions a decoder token attends to: the fixed number, or the context (and the positions added
        after the input's tokens)."""
        return context + self.cross_added if self.cross_keys is None else self.cross_keys

    def growing(self, context: int) -> int:
        """Σ over reaches of slope · keys(context, cap, rate), + cross · the encoder positions (the context and any
        added positions, unless the encoder's length is fixed)."""
        return (
            sum(slope * attended_keys(context, cap, rate) for (cap, rate), slope in self.reaches())
            + self.cross * self.encoder_positions(context)
            + sum(group.growing(context) for group in self.positioned)
        )

    def padded(self, tokens: int) -> int:
        """The positions the layers run over for a prompt of TOKENS: padded up to a multiple of pad_to (when longer
        than pad_above)."""
        return tokens if self.pad_to is None or tokens <= self.pad_above else -(-tokens // self.pad_to) * self.pad_to

    def unchunked_reaches(self) -> list[tuple[Reach, int]]:
        """reaches() less the layers scored in chunks, in blocks or block-sparse (their reach's slope less what they
        put there)."""
        chunked: dict[int | None, int] = {}
        for w, qk, v in self.chunks:
            chunked[2 * w + 1] = chunked.get(2 * w + 1, 0) + qk + v
        for blocked in self.blocks:
            chunked[blocked.window] = chunked.get(blocked.window, 0) + blocked.per_key
        for size, random, per_key in self.block_sparse:
            keys = BlockSparse(block_size=size, random_blocks=random).middle_keys
            chunked[keys] = chunked.get(keys, 0) + per_key
        return [
            (reach, slope - chunked.get(reach[0], 0) if reach[1] == 1 else slope) for reach, slope in self.reaches()
        ]

    def reaches(self) -> list[tuple[Reach, int]]:
        """Every slope by its reach (cap, rate): the windows' at rate 1, the compressed entries' at theirs."""
        return [((window, 1), slope) for window, slope in self.slopes] + [
            ((cap, rate), slope) for (rate, cap), slope in self.compressed
        ]


def causal_keys(tokens: int, window: int | None, rate: int = 1) -> int:
    """Σ_{i=1..n} min(i // rate, window): the keys a causal prompt of n tokens attends to in one head."""

    def uncapped(n: int) -> int:  # Σ_{i=1..n} i // rate: q full blocks of rate tokens, then r + 1 tokens reading q
        q, r = divmod(n, rate)
        return rate * q * (q - 1) // 2 + q * (r + 1)

    if window is None or tokens < rate * window:
        return uncapped(tokens)
    return uncapped(rate * window - 1) + (tokens - rate * window + 1) * window


def sliding_chunks_flops(w: int, qk: int, v: int, positions: int) -> int:
    """One layer's scores of a two-sided window scored in overlapping chunks (Longformer's
    _sliding_chunks_query_key_matmul and _sliding_chunks_matmul_attn_probs_value) over POSITIONS (P, a multiple of 2w):
    QK multiplies P/w − 1 chunks of 2w queries by 2w keys, 4w(P − w) products per head and dimension; the values,
    P/w chunks of w queries by 3w keys (the chunk and w on either side), 3wP. QK and V: the costs per key and product
    (2 · heads · qk_head_dim, 2 · heads · v_head_dim)."""
    return qk * 4 * w * (positions - w) + v * 3 * w * positions


def scored_blocks_flops(blocked: Blocked, positions: int) -> int:
    """The scores of layers whose window is scored in blocks (LongT5's LongT5LocalAttention: _split_into_blocks,
    _concatenate_3_blocks, then einsum ...qhd,...khd->...hqk and ...hqk,...khd->...qhd) over POSITIONS (+ staggered_by):
    padded to P_b, a multiple of the block, P_b / block blocks of block queries, each against blocks · block keys, for
    QK and again for the values: per_key · blocks · block · P_b. With G global tokens (Pegasus-X's
    PegasusXGlobalLocalAttention) each of the P_b queries also reads the G global keys, and the G global queries read
    G + P_b keys: per_key · (G · P_b + G · (G + P_b)) more. With S = positions // summary_every summary keys (LongT5's
    transient-global) each of the P_b queries also reads them, per_key · S · P_b, and making them adds every position
    into its summary, a one-hot matmul: summary_making · positions · S."""
    padded, globals_, summaries = blocked.padded(positions), blocked.global_tokens, blocked.summaries(positions)
    keys = blocked.blocks * blocked.block * padded + globals_ * padded + globals_ * (globals_ + padded)
    return blocked.per_key * (keys + summaries * padded) + blocked.summary_making * positions * summaries


def summary_projection_flops(blocked: Blocked, positions: int) -> int:
    """What projecting the summary keys and values of layers scored in blocks costs over POSITIONS: summary_projections
    · positions // summary_every."""
    return blocked.summary_projections * blocked.summaries(positions)


def _once(layers: list[Layer]) -> dict[str, int]:
    """What a prompt pays once in LAYERS whatever its length: 2 · each layer's attention weights · (its global tokens +
    the positions it adds), 2 · its FFN weights · its global tokens (Attention.global_tokens, staggered_by)."""
    projections = ffn = 0
    for layer in layers:
        attention = layer.attention
        if attention is None or not (attention.global_tokens or attention.staggered_by):
            continue
        weights = _active_weights([layer])
        projections += (
            FLOPS_PER_MULTIPLY_ADD * weights["attention"] * (attention.global_tokens + attention.staggered_by)
        )
        ffn += FLOPS_PER_MULTIPLY_ADD * weights["ffn"] * attention.global_tokens
    return {"once_projections": projections, "once_ffn": ffn} if projections or ffn else {}


def _blocks(layers: list[Layer], per_key) -> tuple[Blocked, ...]:
    """The layers whose window is scored in blocks, as Blocked: summed by what shapes their blocks, PER_KEY(attention)
    each."""
    found: dict[tuple[int, int, int, int, int, int], tuple[int, int, int]] = {}
    for layer in layers:
        attention = layer.attention
        if attention is None or attention.scored_blocks is None or attention.window is None:
            continue
        shape = (
            attention.window,
            *attention.scored_blocks,
            attention.staggered_by,
            attention.global_tokens,
            attention.summary_every,
        )
        cost, projections, making = found.get(shape, (0, 0, 0))
        if attention.summary_every:
            kv = sum(
                part.active_matmul_weights
                for part in layer_parts(layer)
                if part.component == "attention" and part.name in ("k", "v")
            )
            projections += FLOPS_PER_MULTIPLY_ADD * kv
            making += FLOPS_PER_MULTIPLY_ADD * attention.hidden_size
        found[shape] = (cost + per_key(attention), projections, making)
    return tuple(
        Blocked(*shape, per_key=cost, summary_projections=projections, summary_making=making)
        for shape, (cost, projections, making) in sorted(found.items())
    )


def block_sparse_flops(size: int, random: int, per_key: int, positions: int, causal: bool = False) -> int:
    """One layer's scores of block-sparse attention (BigBird's bigbird_block_sparse_attention) over POSITIONS (P):
    PER_KEY (2 · heads · (qk_head_dim + v_head_dim)) × BlockSparse.keys(P), the first and last blocks against all P
    keys, the second and second-to-last against 4 + random blocks, each middle block against 5 + random; at most
    (5 + 2 · random) · size positions transformers attends fully instead (causal there where the prompt is)."""
    sparse = BlockSparse(block_size=size, random_blocks=random)
    if causal and positions <= sparse.full_up_to:
        return per_key * causal_keys(positions, None)
    return per_key * sparse.keys(positions)


def _block_sparse(layers: list[Layer], per_key) -> tuple[tuple[int, int, int], ...]:
    """The block-sparse layers, by (block_size, random_blocks): their summed cost per key (PER_KEY of each)."""
    by_shape: dict[tuple[int, int], int] = {}
    for layer in layers:
        attention = layer.attention
        if attention is None or attention.block_sparse is None:
            continue
        shape = (attention.block_sparse.block_size, attention.block_sparse.random_blocks)
        by_shape[shape] = by_shape.get(shape, 0) + per_key(attention)
    return tuple((size, random, cost) for (size, random), cost in sorted(by_shape.items()))


def _chunks(layers: list[Layer]) -> tuple[tuple[int, int, int], ...]:
    """The layers whose window is scored in chunks, by w: (w, Σ 2 · heads · qk_head_dim, Σ 2 · heads · v_head_dim),
    each once per pass."""
    by_w: dict[int, tuple[int, int]] = {}
    for layer in layers:
        attention = layer.attention
        if attention is None or not attention.two_sided_chunks or attention.window is None:
            continue
        w = (attention.window - 1) // 2
        heads = FLOPS_PER_MULTIPLY_ADD * attention.num_heads * attention.passes
        qk, v = by_w.get(w, (0, 0))
        by_w[w] = (qk + heads * attention.qk_head_dim, v + heads * attention.v_head_dim)
    return tuple((w, qk, v) for w, (qk, v) in sorted(by_w.items()))


def score_flops_per_key(attention: Attention, mla_form: MlaForm = "plain") -> int:
    """2 · heads · (qk_head_dim + v_head_dim); absorbed MLA: 2 · heads · (kv_lora + rope + kv_lora); relative keys
    (SpeechT5): 2 · heads · qk_head_dim more, the query against the key's distance embedding; all of it once per
    pass (DiffLlama: two)."""
    if attention.mla is not None and mla_form == "absorbed":
        mla = attention.mla
        per_head = (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    else:
        per_head = attention.qk_head_dim + attention.v_head_dim
    if attention.relative_keys:
        per_head += attention.qk_head_dim
    return FLOPS_PER_MULTIPLY_ADD * attention.num_heads * per_head * attention.passes


def indexer_score_flops_per_key(indexer: Indexer) -> int:
    """The indexer scores each key with each head, then weighs the heads' scores (weights @ scores, a matmul):
    2 · heads · head_dim + 2 · heads."""
    return FLOPS_PER_MULTIPLY_ADD * indexer.heads * (indexer.head_dim + 1)


def mixer_state_flops(mixer: Mixer) -> int:
    """Per token, besides the projections: each depthwise conv (2 · channels · kernel) and the state update."""
    convs = sum(FLOPS_PER_MULTIPLY_ADD * conv.channels * conv.kernel for conv in mixer.convs)
    return convs + mixer.state_update_flops


def _extra_parts(spec: ModelSpec) -> list[Part]:
    """Model-level modules (OPT's projections, BERT's heads) as parts."""
    return parts_of(tensor for extra in spec.extras for tensor in extra_tensors(extra))


def encoder_layers(spec: ModelSpec) -> list[Layer]:
    """An encoder-decoder's encoder stack, which runs once over the input; none for other models."""
    stacks = {layer.stack for layer in spec.layers}
    return [layer for layer in spec.layers if layer.stack == "encoder"] if stacks == {"encoder", "decoder"} else []


def _active_weights(layers: list[Layer], runs: str = "every_token") -> dict[str, int]:
    """Matmul weights of LAYERS that one token uses, by component (FFN: router and active experts only).

    Cross-attention's keys and values run once per encoder position ("once_per_input"), not per token.
    """
    weights = {"attention": 0, "ffn": 0, "mixer": 0, "other": 0}
    cache: dict[Layer, list[Part]] = {}
    for layer in layers:
        if layer not in cache:
            cache[layer] = layer_parts(layer)
        for part in cache[layer]:
            if part.runs != runs:
                continue
            component = "attention" if part.component == "cross_attention" else part.component
            if component in weights:
                weights[component] += part.active_matmul_weights
    return weights


def _extra_weights(spec: ModelSpec) -> int:
    return sum(part.active_matmul_weights for part in _extra_parts(spec) if part.runs == "every_token")


def _attention_slopes(layers: list[Layer], per_key, indexer_per_key=None) -> tuple[Slopes, int]:
    """Self-attention's cost per key, by reach (attention_reach), and cross-attention's per encoder position.

    Sparse attention attends to min(n, top_k) keys, the indexer's picks (like a window of top_k), while the
    indexer itself scores all n keys (or all n // rate compressed entries).
    """
    slopes, cross = [], 0
    for layer in layers:
        attention = layer.attention
        if attention is not None and not is_positioned(layer):  # a positioned layer's scores: Positioned
            slopes += [(reach, per_key(attention)) for reach in attention_reach(attention)]
            scored = indexer_reach(attention)
            if scored is not None and indexer_per_key is not None:
                slopes.append((scored, indexer_per_key(attention.indexer)))
        if layer.cross_attention is not None:
            cross += per_key(layer.cross_attention)
    return _by_reach(slopes), cross


def _lm_head_weights(spec: ModelSpec) -> int:
    return lm_head_rows(spec) * lm_head_width(spec) if spec.lm_head else 0


class Slopes(NamedTuple):
    """What ContextProfile holds of the costs per key: by window (rate 1), and by (rate, cap) for compressed entries."""

    slopes: tuple[tuple[int | None, int], ...]
    compressed: tuple[tuple[tuple[int, int | None], int], ...]


def _by_reach(values: list[tuple[Reach, int]]) -> Slopes:
    """The costs per key summed by reach, as ContextProfile holds them: by window (rate 1) in ``slopes``, by
    (rate, cap) in ``compressed``."""
    windows: dict[int | None, int] = {}
    compressed: dict[tuple[int, int | None], int] = {}
    for (cap, rate), value in values:
        if rate == 1:
            windows[cap] = windows.get(cap, 0) + value
        else:
            compressed[(rate, cap)] = compressed.get((rate, cap), 0) + value
    return Slopes(
        tuple(sorted(windows.items(), key=lambda item: (item[0] is None, item[0] or 0))),
        tuple(sorted(compressed.items(), key=lambda item: (item[0][0], item[0][1] is None, item[0][1] or 0))),
    )


def flops_profile(spec: ModelSpec, mla_form: MlaForm = "plain") -> ContextProfile:
    """FLOPs per generated token: 2 · active matmul weights and mixer state updates, fixed; 2 · heads · (qk + v) per key."""
    layers = generating_layers(spec)
    weights = _active_weights(layers)
    reaches, cross = _attention_slopes(
        layers, lambda attention: score_flops_per_key(attention, mla_form), indexer_score_flops_per_key
    )
    return ContextProfile(
        attention_projections=FLOPS_PER_MULTIPLY_ADD * weights["attention"],
        ffn=FLOPS_PER_MULTIPLY_ADD * weights["ffn"],
        lm_head=FLOPS_PER_MULTIPLY_ADD * _lm_head_weights(spec),
        slopes=reaches.slopes,
        compressed=reaches.compressed,
        mixer=FLOPS_PER_MULTIPLY_ADD * weights["mixer"],
        mixer_state=sum(mixer_state_flops(layer.mixer) for layer in layers if layer.mixer is not None),
        other=FLOPS_PER_MULTIPLY_ADD * (weights["other"] + _extra_weights(spec))
        + sum(layer.other_flops for layer in layers),
        cross=cross,
        cross_keys=spec.cross_attention_keys,
        chunks=_chunks(layers),
        blocks=_blocks(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        **_once(layers),
        block_sparse=_block_sparse(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        **_padding(spec, layers, unpadded_other=FLOPS_PER_MULTIPLY_ADD * _extra_weights(spec)),
        cross_added=spec.encoder_added_positions,
        positioned=_positioned(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        head_positions=spec.output_positions,
    )


def _padding(spec: ModelSpec, layers: list[Layer], **unpadded: int) -> dict:
    """pad_to and what runs unpadded, for LAYERS of the encoder stack when the spec pads its input; nothing else."""
    pad_to = spec.encoder_pad_to
    if pad_to is None or not layers or any(layer.stack != "encoder" for layer in layers):
        return {}
    return {"pad_to": pad_to, "pad_above": spec.encoder_pad_above, **unpadded}


def stack_profile(
    layers: list[Layer],
    mla_form: MlaForm = "plain",
    attention_projections: int = 0,
    other: int = 0,
    spec: ModelSpec | None = None,
) -> ContextProfile:
    """FLOPs per position of a stack that reads its whole input at once (an encoder, an audio tower): 2 · its matmul
    weights, + 2 · ATTENTION_PROJECTIONS and OTHER weights more (which read its output, unpadded where SPEC pads the
    encoder's input), and the score slopes."""
    weights = _active_weights(layers)
    reaches, _ = _attention_slopes(layers, lambda attention: score_flops_per_key(attention, mla_form))
    return ContextProfile(
        attention_projections=FLOPS_PER_MULTIPLY_ADD * (weights["attention"] + attention_projections),
        ffn=FLOPS_PER_MULTIPLY_ADD * weights["ffn"],
        lm_head=0,
        slopes=reaches.slopes,
        compressed=reaches.compressed,
        mixer=FLOPS_PER_MULTIPLY_ADD * weights["mixer"],
        mixer_state=sum(mixer_state_flops(layer.mixer) for layer in layers if layer.mixer is not None),
        other=FLOPS_PER_MULTIPLY_ADD * other,
        chunks=_chunks(layers),
        blocks=_blocks(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        **_once(layers),
        block_sparse=_block_sparse(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        positioned=_positioned(layers, lambda attention: score_flops_per_key(attention, mla_form)),
        **(
            _padding(
                spec,
                layers,
                unpadded_projections=FLOPS_PER_MULTIPLY_ADD * attention_projections,
                unpadded_other=FLOPS_PER_MULTIPLY_ADD * other,
            )
            if spec is not None
            else {}
        ),
    )


def cross_kv_weights(spec: ModelSpec) -> int:
    """The cross-attention key and value weights of the decoder layers: each encoder position runs them once."""
    return _active_weights(generating_layers(spec), runs="once_per_input")["attention"]


def encoder_profile(spec: ModelSpec, mla_form: MlaForm = "plain") -> ContextProfile | None:
    """FLOPs per input token of an encoder-decoder's encoder stack, with the cross-attention keys and values
    every decoder layer projects from each encoder position and the model-level modules run once per position
    (EncoderDecoderModel's enc_to_dec_proj); None for other models."""
    layers = encoder_layers(spec)
    if not layers:
        return None
    once = extra_weights_by_runs(spec).get("once_per_input", 0)
    return stack_profile(layers, mla_form, cross_kv_weights(spec), once, spec)


def extra_weights_by_runs(spec: ModelSpec) -> dict[str, int]:
    """The matmul weights of the model-level modules, by how often they run (Runs)."""
    weights: dict[str, int] = {}
    for part in _extra_parts(spec):
        weights[part.runs] = weights.get(part.runs, 0) + part.active_matmul_weights
    return weights


def audio_front_end_flops(spec: ModelSpec) -> int:
    """One window's convolutions before the encoder's layers: 2 · (weights run per frame · frames + weights run per
    position · positions); 0 without a fixed audio window."""
    if spec.audio is None:
        return 0
    weights = extra_weights_by_runs(spec)
    per_frame, per_position = weights.get("per_audio_frame", 0), weights.get("per_audio_position", 0)
    return FLOPS_PER_MULTIPLY_ADD * (per_frame * spec.audio.frames + per_position * spec.audio.positions)


def patch_front_end_flops(spec: ModelSpec) -> int:
    """An encoder's patch embedding: 2 · its weights · the patches, the encoder's fixed positions less its class
    tokens, or the positions added after the input's tokens (UDOP's page); 0 without one."""
    weights = extra_weights_by_runs(spec).get("per_encoder_patch", 0)
    if spec.cross_attention_keys is not None:
        patches = spec.cross_attention_keys - spec.encoder_class_tokens
    else:
        patches = spec.encoder_added_positions
    return FLOPS_PER_MULTIPLY_ADD * weights * patches


def bytes_profile(spec: ModelSpec, bytes_per_element: int) -> ContextProfile:
    """Bytes one decode step reads at batch 1: active weights and mixer states once, plus the KV cache per key
    (its per-token size from ffncalc.memory)."""
    layers = generating_layers(spec)
    weights = _active_weights(layers)
    states = sum(
        layer.mixer.state_elements + layer.mixer.conv_state_elements for layer in layers if layer.mixer is not None
    )
    reaches, cross = _attention_slopes(
        layers,
        lambda attention: attention_kv_elements(attention) * bytes_per_element,
        lambda indexer: indexer.head_dim * bytes_per_element,  # the indexer's key cache, read for every key
    )
    return ContextProfile(
        attention_projections=weights["attention"] * bytes_per_element,
        ffn=weights["ffn"] * bytes_per_element,
        lm_head=_lm_head_weights(spec) * bytes_per_element,
        slopes=reaches.slopes,
        compressed=reaches.compressed,
        mixer=weights["mixer"] * bytes_per_element,
        mixer_state=states * bytes_per_element,
        other=(weights["other"] + _extra_weights(spec)) * bytes_per_element,
        cross=cross,
        cross_keys=spec.cross_attention_keys,
        cross_added=spec.encoder_added_positions,
    )


def crossover_context(profile: ContextProfile) -> Fraction | None:
    """The least real n where Σ slope · min(n // rate, cap) (+ cross · n) reaches the FFN; None if never.

    The growing part is non-decreasing; read over real n, its rate-1 terms min(n, cap) grow linearly and
    its compressed terms step up at multiples of their rate. Every kink and step falls on a whole context,
    so find the first whole context m that reaches the FFN, then solve the line on [m − 1, m), or take
    m itself when a step reaches it.
    """
    target = profile.ffn
    if not any(value for _, value in profile.reaches()) and not profile.cross_slope:
        return None
    if target <= 0:
        return Fraction(0)
    limit = plateau(profile)
    if limit is not None and limit < target:
        return None
    high = 1
    while profile.growing(high) < target:
        high *= 2
    low = high // 2  # growing(low) < target, or low = 0
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if profile.growing(middle) >= target else (middle, high)
    before = profile.growing(high - 1)
    slope = profile.cross_slope + sum(value for window, value in profile.slopes if window is None or window >= high)
    if slope and before + slope >= target:
        return Fraction(high - 1) + Fraction(target - before, slope)
    return Fraction(high)


def plateau(profile: ContextProfile) -> int | None:
    """The most the growing part can reach when every reach is capped: Σ slope · cap (+ cross · the fixed encoder
    positions); None when some layer is not."""
    if profile.cross_slope or any(cap is None and value for (cap, _), value in profile.reaches()):
        return None
    capped = sum(value * cap for (cap, _), value in profile.reaches() if value and cap is not None)
    return capped + profile.cross * profile.encoder_positions(0)


# --- results ----------------------------------------------------------------------------------


class FlopsBreakdown(Result):
    """FLOPs by component; ``total`` is their sum."""

    attention_projections: int
    attention_scores: int
    ffn: int
    lm_head: int
    mixer: int  # the projections of Mamba-2 / Gated DeltaNet … layers (0 without them)
    mixer_state: int  # their convolutions and state updates
    other: int  # model-level linears such as OPT's project_in/out
    total: int


#: FlopsBreakdown's components as tables name them, in the order they are shown: the one vocabulary of flops and
#: train (speed's roofline splits by operator instead: roofline.OPERATORS).
FLOPS_COMPONENTS = (
    ("ffn", "FFN"),
    ("attention_projections", "Attention projections"),
    ("attention_scores", "Attention scores"),
    ("mixer", "Mixer projections"),
    ("mixer_state", "Mixer state (conv, recurrence)"),
    ("lm_head", "Output head"),
    ("other", "Other"),
)


class ImageFlops(Result):
    """What one image costs the vision tower and projector: ``image`` in flops' JSON with an image."""

    width: int  # as asked
    height: int
    resized_width: int  # as the tower reads it (per tile, for a tiling tower)
    resized_height: int
    per_tile: bool  # the tower reads tiles of resized_width × resized_height; the figures are for one
    patches: int
    image_tokens: int  # what the image becomes in the language model's sequence
    patch_embedding: int
    attention_projections: int
    attention_scores: int
    ffn: int
    projector: int
    total: int
    mixers: int = 0  # a tower's layers that mix patches without attention (LFM3-VL's gated convolutions)


class AudioFlops(Result):
    """What one audio clip costs a speech encoder: ``audio`` in flops' JSON with an audio clip. The encoder reads
    whole windows (the last padded): the figures are for all of them."""

    seconds: int | float  # as asked
    window_seconds: int | float  # frames per window / frames per second
    windows: int  # ⌈seconds / window_seconds⌉
    frames: int  # log-mel frames, all windows
    encoder_positions: int  # what the convolutions leave, all windows
    audio_tokens: int | None  # what the clip becomes in the language model's sequence; None: an encoder-decoder
    front_end: int  # the convolutions over the frames
    attention_projections: int
    attention_scores: int
    ffn: int
    cross_attention_kv: int  # an encoder-decoder's decoder projects each position's keys and values once per layer
    projector: int
    total: int


class FlopsReport(ModelInfo):
    """Decode FLOPs per token at one context, prefill of a prompt that long, and training. flops's JSON document."""

    context: int
    mla_form: MlaForm
    causal: bool
    per_token: FlopsBreakdown
    prefill: FlopsBreakdown
    training: int
    conventions: list[str]
    image: ImageFlops | None = None  # with --image: one image through the vision tower and projector
    audio: AudioFlops | None = None  # with --audio: one clip through the speech encoder (and projector)


class CrossoverRow(Result):
    """Per-token cost at one context. ``attention_context`` grows with it: score FLOPs, or KV-cache bytes."""

    context: int
    ffn: int
    attention_projections: int
    attention_context: int
    lm_head: int
    mixer: int
    mixer_state: int
    other: int
    total: int
    ffn_share: float
    is_crossover: bool


class CurvePoint(Result):
    """The growing attention cost at one context, for plotting."""

    context: int
    attention_context: int


class CrossoverReport(ModelInfo):
    """Where the context-dependent attention cost overtakes the FFN. crossover's JSON document."""

    measure: Measure
    unit: Literal["FLOPs", "bytes"]
    mla_form: MlaForm
    dtype: str | None
    bytes_per_element: int | None
    max_context: int
    ffn: int
    crossover_context: int | float | None  # exact when an integer; the real solution otherwise
    crossover_context_ceil: int | None  # first whole context at which attention ≥ FFN
    never_reason: str | None
    rows: list[CrossoverRow]
    curve: list[CurvePoint]  # CURVE_POINTS contexts, evenly spaced on a log₂ axis from the first row to the last
    conventions: list[str]


CURVE_POINTS = 64

CONVENTIONS = [
    "2 FLOPs per multiply-add; matrix multiplications only (no biases, norms, activations, softmax; the embedding lookup is free)",
    "decode at context n: full-attention layers attend to n keys, sliding-window layers to min(n, window)",
    "attention scores per key: 2 · heads · (qk_head_dim + v_head_dim), once per pass (DiffLlama's attention runs two); "
    "grouped KV heads do not reduce them",
    "MoE: router + experts_per_token routed experts + shared experts",
    "state-space and linear-attention mixers: their projections (matmuls), and apart their convolutions and "
    "state updates, each derived in families/mixers.py",
    "the output head costs 2 · vocab · hidden per token, tied or not",
]
# Only for models with compressed keys.
COMPRESSED_CONVENTION = (
    "compressed attention: besides min(n, window) keys, n // rate compressed entries (at most the indexer's top_k), "
    "each a key of the attention's width; the indexer scores all n // rate. Pooling rate tokens into an entry is "
    "elementwise, not counted"
)


def compressed_conventions(spec: ModelSpec) -> list[str]:
    """COMPRESSED_CONVENTION when some layer attends to compressed keys."""
    attentions = [layer.attention for layer in generating_layers(spec) if layer.attention is not None]
    return [COMPRESSED_CONVENTION] if any(attention.compressor for attention in attentions) else []


PICKED_CONVENTION = (
    "picked keys: a layer whose keys a score picks reads min(n, picked_keys) of them (Doge's keep_window_size), all "
    "of them cached; the top-k that picks them is no matmul, not counted"
)


def picked_conventions(spec: ModelSpec) -> list[str]:
    """PICKED_CONVENTION when some layer's keys are picked by a score (Attention.picked_keys)."""
    attentions = [layer.attention for layer in generating_layers(spec) if layer.attention is not None]
    return [PICKED_CONVENTION] if any(attention.picked_keys is not None for attention in attentions) else []


def chunked_conventions(spec: ModelSpec) -> list[str]:
    """How a prompt reads two-sided windows scored in chunks (Attention.two_sided_chunks) and an input padded for them
    (ModelSpec.encoder_pad_to), when some layer has them."""
    attentions = [layer.attention for layer in spec.layers if layer.attention is not None]
    if not any(attention.two_sided_chunks for attention in attentions):
        return []
    padded = (
        f"the encoder's layers run over its input padded to P, a multiple of {spec.encoder_pad_to:,} (what reads their "
        "output, the head or a decoder's cross-attention keys and values, over its n tokens); "
        if spec.encoder_pad_to is not None
        else ""
    )
    return [
        "two-sided windows scored in chunks (Longformer): a query reads the w keys either side of it and its own "
        f"(per token: min(n, 2w + 1) keys); {padded}a prompt pays each such layer what its overlapping chunks compute, "
        "per head 2 · qk_head_dim · 4w(P − w) + 2 · v_head_dim · 3wP, padding included, as FlopCounterMode counts "
        "transformers' forward"
    ]


def blocked_conventions(spec: ModelSpec) -> list[str]:
    """How a prompt reads windows scored in blocks (Attention.scored_blocks), when some layer has them."""
    attentions = [layer.attention for layer in spec.layers if layer.attention is not None]
    if not any(attention.scored_blocks is not None for attention in attentions):
        return []
    return (
        [
            "windows scored in blocks (LongT5's local attention, Pegasus-X's): a query reads the keys within the window "
            "about it (per token: min(n, window) keys); a prompt pays each such layer what its blocks compute, the input "
            "padded to P_b, a multiple of the block, each block's queries against the keys of its blocks (LongT5: its own "
            "and the two beside it), per head 2 · (qk_head_dim + v_head_dim) · blocks · block · P_b, padding included "
            "(the projections over the n tokens, or the encoder's padded input), as FlopCounterMode counts transformers' "
            "forward"
        ]
        + (
            [
                "global tokens (Pegasus-X's): G learned tokens run through each such layer besides the input (its "
                "projections and FFN over G more positions, once a prompt), every query reads their G keys and their "
                "queries read all G + P_b keys; a staggered layer runs its attention over P_b = P + one block (half a block "
                "of zeros at either end)"
            ]
            if any(attention.global_tokens or attention.staggered_by for attention in attentions)
            else []
        )
        + (
            [
                "summary keys (LongT5's transient-global): every query of such a layer also reads S = n // every summary "
                "keys and values, each the sum of its every tokens' inputs (a one-hot matmul, 2 · n · S · hidden, counted "
                "with the scores), normed and projected by k and v (2 · S · their weights, with the projections): "
                "2 · (qk_head_dim + v_head_dim) · S · P_b more a head"
            ]
            if any(attention.summary_every for attention in attentions)
            else []
        )
    )


def block_sparse_conventions(spec: ModelSpec) -> list[str]:
    """How a prompt reads block-sparse attention (Attention.block_sparse) and the input it pads for it
    (ModelSpec.encoder_pad_to above encoder_pad_above), when some layer has it."""
    sparse = sorted(
        {layer.attention.block_sparse for layer in spec.layers if layer.attention and layer.attention.block_sparse},
        key=lambda shape: (shape.block_size, shape.random_blocks),
    )
    if not sparse:
        return []
    shapes = "; ".join(
        f"blocks of b = {shape.block_size:,} with r = {shape.random_blocks:,} random blocks: fully up to "
        f"{shape.full_up_to:,} tokens, per token min(n, {shape.middle_keys:,}) keys"
        for shape in sparse
    )
    padded = (
        f"above that the encoder's layers run over its input padded to P, a multiple of {spec.encoder_pad_to:,} (what "
        "reads their output, the head or a decoder's cross-attention keys and values, over its n tokens), and "
        if spec.encoder_pad_to is not None
        else "above that "
    )
    return [
        "block-sparse attention (BigBird): a prompt of at most (5 + 2r) · b tokens is attended fully (n keys a query), "
        f"as transformers switches to full attention for it; {padded}a head pays 2 · (qk_head_dim + v_head_dim) · b · "
        "(2P + 2 · (4 + r) · b + (P / b − 4) · (5 + r) · b): the first and last blocks (global) read all P keys, the "
        "second and second-to-last 4 + r blocks, every middle block 5 + r (its own and its neighbours, the two global "
        "blocks, r random ones), padding included, as FlopCounterMode counts transformers' forward; per token, what a "
        "middle block's query reads, min(n, (5 + r) · b) (between (5 + r) · b and (5 + 2r) · b tokens, attended fully, "
        "a query reads all n). The random blocks are as many in training as in eval (where transformers draws none and "
        f"gathers the first block r times): the same matmuls, the same FLOPs ({shapes})"
    ]


def positioned_conventions(spec: ModelSpec) -> list[str]:
    """How pooled layers (Layer.pooling) and relative-shift positions (Attention.relative_shift) are counted, when some
    layer has them."""
    pooled = any(layer.pooling is not None and layer.pooling.times for layer in spec.layers)
    fixed = any(
        layer.pooling is not None and (layer.pooling.fixed_queries or layer.pooling.fixed_keys) for layer in spec.layers
    )
    relative = any(layer.attention is not None and layer.attention.relative_shift for layer in spec.layers)
    return (
        (
            [
                "pooled layers (Funnel's blocks): a layer pooled b times runs its queries, output and FFN over the input "
                "halved b times (⌈L / 2⌉ a halving; with separate_cls the first position kept apart, with truncate_seq the "
                "last dropped first; at most 2 positions, 1 without separate_cls, not halved), the first layer of a block "
                "its keys and values over the block's input (pool_q_only), every query against every key; per token, one "
                "position through every layer, reading the keys its layer has at context n"
            ]
            if pooled
            else []
        )
        + (
            [
                "fixed positions (Perceiver's latents and decoder queries): a layer whose queries or keys run over a fixed "
                "number of positions runs its queries, output and FFN, or its keys and values, over them whatever the "
                "input's length, every query against every key; layers run again with shared weights count their weights "
                "once and their FLOPs at every run; per token, one position through every layer, reading the keys its "
                "layer has at context n"
                + (
                    f"; the head over its {spec.output_positions:,} fixed positions in a forward"
                    if spec.output_positions is not None
                    else ""
                )
            ]
            if fixed
            else []
        )
        + (
            [
                "relative-shift positions (Funnel): each such layer projects R relative-position embeddings through its "
                "r_kernel, 2 · hidden · heads · head_dim each (with the projections, in the prefill only: once a layer, not "
                "per token), R = 2 · its queries' positions + its keys' where it pools its queries, else 2 · its positions; "
                "each query is scored against all R and the token types, 2 · heads · head_dim each (with the scores)"
            ]
            if relative
            else []
        )
    )


def mixer_conventions(spec: ModelSpec) -> list[str]:
    """What the model's mixers compute that no figure counts (Mixer.not_counted), each said once."""
    return sorted({layer.mixer.not_counted for layer in spec.layers if layer.mixer and layer.mixer.not_counted})


def _breakdown(profile: ContextProfile, tokens: int, growing: int, positions: int | None = None) -> FlopsBreakdown:
    """TOKENS × the fixed parts and GROWING, the scores; with POSITIONS (a padded prompt) the layers run over those,
    and the head and what reads the layers' output (profile.unpadded_*) over the tokens."""
    if positions is None:
        positions = tokens
    projections, other = profile.unpadded_projections, profile.unpadded_other
    parts = {
        "attention_projections": (profile.attention_projections - projections) * positions + projections * tokens,
        "attention_scores": growing,
        "ffn": profile.ffn * positions,
        "lm_head": profile.lm_head * tokens,
        "mixer": profile.mixer * positions,
        "mixer_state": profile.mixer_state * positions,
        "other": (profile.other - other) * positions + other * tokens,
    }
    return FlopsBreakdown(**parts, total=sum(parts.values()))


def _sum(a: FlopsBreakdown, b: FlopsBreakdown) -> FlopsBreakdown:
    return FlopsBreakdown(**{name: getattr(a, name) + getattr(b, name) for name in field_names(FlopsBreakdown)})


def per_token_flops(profile: ContextProfile, context: int) -> FlopsBreakdown:
    """Decode FLOPs for one token at context n: fixed matmuls + Σ slope · keys(n)."""
    return _breakdown(profile, 1, profile.growing(context))


def prefill_flops(profile: ContextProfile, tokens: int, causal: bool = True) -> FlopsBreakdown:
    """A prompt of n tokens: n × fixed matmuls + scores (causal: Σ_i keys(i); else n · keys(n)); cross-attention
    always n · the encoder positions (every decoder position sees the whole encoded input: n, or a fixed length).
    Layers scored in chunks, in blocks or block-sparse cost what those compute (sliding_chunks_flops,
    scored_blocks_flops, block_sparse_flops); where the layers run over the prompt padded (profile.pad_to), they run
    over P positions, and so do their scores; what runs once whatever the prompt's length (profile.once_projections,
    once_ffn) is added once."""
    positions = profile.padded(tokens)
    reaches = profile.unchunked_reaches()
    if causal:
        scores = sum(slope * causal_keys(positions, cap, rate) for (cap, rate), slope in reaches)
    else:
        scores = positions * sum(slope * attended_keys(positions, cap, rate) for (cap, rate), slope in reaches)
    scores += profile.cross * tokens * profile.encoder_positions(tokens)
    scores += sum(sliding_chunks_flops(w, qk, v, positions) for w, qk, v in profile.chunks)
    scores += sum(scored_blocks_flops(blocked, positions) for blocked in profile.blocks)
    scores += sum(block_sparse_flops(*shape, positions, causal) for shape in profile.block_sparse)
    prefill = _breakdown(profile, tokens, scores, positions)
    if profile.head_positions is not None:  # the head over its own positions (ModelSpec.output_positions)
        head = profile.lm_head * profile.head_positions
        prefill = replace(prefill, lm_head=head, total=prefill.total - prefill.lm_head + head)
    if profile.positioned:
        prefill = _positioned_prefill(prefill, profile.positioned, positions)
    projections = profile.once_projections + sum(
        summary_projection_flops(blocked, positions) for blocked in profile.blocks
    )
    if not (projections or profile.once_ffn):
        return prefill
    return replace(
        prefill,
        attention_projections=prefill.attention_projections + projections,
        ffn=prefill.ffn + profile.once_ffn,
        total=prefill.total + projections + profile.once_ffn,
    )


def _positioned_prefill(prefill: FlopsBreakdown, groups: tuple[Positioned, ...], positions: int) -> FlopsBreakdown:
    """PREFILL with the positioned layers (GROUPS) over the positions each runs over for an input of POSITIONS, in place
    of one position through each for every one of them (what _breakdown charged)."""
    parts = {name: getattr(prefill, name) for name in field_names(FlopsBreakdown) if name != "total"}
    for group in groups:
        parts["attention_projections"] -= (group.queries_weights + group.keys_weights) * positions
        parts["ffn"] -= group.ffn * positions
        parts["other"] -= group.other * positions
        for name, cost in group.prefill(positions).items():
            parts[name] += cost
    return FlopsBreakdown(**parts, total=sum(parts.values()))


def encoder_pass_flops(spec: ModelSpec, tokens: int, mla_form: MlaForm = "plain") -> FlopsBreakdown | None:
    """The encoder's one pass over an input of TOKENS, bidirectionally (n tokens and any page's patches, or one fixed
    window of audio), with its audio or patch front end; None for a model without an encoder stack."""
    encoder = encoder_profile(spec, mla_form)
    if encoder is None:
        return None
    encoded = prefill_flops(encoder, encoder_positions(spec, tokens), causal=False)
    front_end = audio_front_end_flops(spec) if spec.audio is not None and spec.audio.stack == "encoder" else 0
    front_end += patch_front_end_flops(spec)
    return replace(encoded, other=encoded.other + front_end, total=encoded.total + front_end)


def first_token_flops(spec: ModelSpec, prompt: int, mla_form: MlaForm = "plain") -> FlopsBreakdown:
    """What an encoder-decoder computes before its first generated token for a prompt of PROMPT tokens: the encoder's
    pass over the prompt (encoder_pass_flops) and the decoder's one position, its start token, which attends to
    itself (one key) and, through its cross-attention, to every encoder position."""
    profile = flops_profile(spec, mla_form)
    encoded = encoder_pass_flops(spec, prompt, mla_form)
    if encoded is None:
        raise ValueError("first_token_flops: the model has no encoder")  # pragma: no cover - callers check
    scores = sum(slope * attended_keys(1, cap, rate) for (cap, rate), slope in profile.reaches())
    scores += profile.cross * profile.encoder_positions(prompt)
    return _sum(encoded, _breakdown(profile, 1, scores))


def count_flops(
    spec: ModelSpec, context: int, info: ModelInfo | None = None, mla_form: MlaForm = "plain", causal: bool = True
) -> FlopsReport:
    """Per-token decode FLOPs at CONTEXT, prefill of CONTEXT tokens, and training = 3 × prefill."""
    profile = flops_profile(spec, mla_form)
    encoder_only = all(layer.stack == "encoder" for layer in spec.layers)
    causal = causal and not encoder_only  # an encoder's tokens see the whole input
    prefill = prefill_flops(profile, context, causal)
    encoded = encoder_pass_flops(spec, context, mla_form)
    encoder = encoded is not None
    if encoded is not None:
        prefill = _sum(prefill, encoded)
    conventions = (
        CONVENTIONS
        + (
            [
                "encoder: every token attends to all n input tokens; 'per token' is per input token"
                if encoder_reads_all(spec)
                else "encoder: every token attends as the note below says; 'per token' is per input token"
            ]
            if encoder_only
            else []
        )
        + ([encoder_decoder_convention(spec)] if encoder else [])
        + [
            "prefill: causal (token i attends to i keys, capped by the window)"
            if causal
            else "prefill: non-causal, every token charged n keys (n · keys(n)), as torch's FlopCounterMode counts",
            f"training: {TRAINING_MULTIPLIER} × the forward pass of the prompt (backward ≈ 2 × forward)",
        ]
    )
    conventions += compressed_conventions(spec) + picked_conventions(spec) + chunked_conventions(spec)
    conventions += blocked_conventions(spec)
    conventions += block_sparse_conventions(spec)
    conventions += positioned_conventions(spec)
    conventions += mixer_conventions(spec)
    if any(layer.stack in ("vision", "video", "audio") for layer in spec.layers):
        image = " (`image` WxH for what an image costs)" if spec.image is not None else ""
        audio = " (`audio` SECONDS for what a clip costs)" if spec.audio is not None else ""
        conventions.append(f"per text token: a text token runs the language model only{image}{audio}")
    return FlopsReport(
        **field_values(info or ModelInfo(model_type=spec.model_type)),
        context=context,
        mla_form=mla_form,
        causal=causal,
        per_token=per_token_flops(profile, context),
        prefill=prefill,
        training=TRAINING_MULTIPLIER * prefill.total,
        conventions=conventions,
    )


def encoder_reads_all(spec: ModelSpec) -> bool:
    """Whether every encoder token's attention reads all the encoder's positions (no window, chunks, blocks or block
    sparsity in any layer of the encoder stack; an encoder-only model's layers are its encoder)."""
    layers = [layer for layer in spec.layers if layer.stack == "encoder" and layer.attention is not None]
    return all(
        layer.attention.window is None and layer.attention.block_sparse is None for layer in layers if layer.attention
    )


def _each_attending(spec: ModelSpec, positions: str) -> str:
    """How the encoder's positions attend, for the conventions: to all of them, or as the attention's own note says."""
    return f"each attending to all {positions}" if encoder_reads_all(spec) else "each attending as the note below says"


def encoder_decoder_convention(spec: ModelSpec) -> str:
    """How an encoder-decoder's per-token and prefill figures read its encoder: over n input tokens, or over one
    fixed window of audio."""
    audio = spec.audio
    if audio is not None and spec.cross_attention_keys is not None:
        return (
            f"encoder-decoder over audio: per token is one generated (decoder) token, its cross-attention reading the "
            f"encoder's {spec.cross_attention_keys:,} positions (one window of audio, whatever the context); the prefill runs the encoder over one window ({audio.frames:,} mel frames through its "
            f"convolutions, {audio.positions:,} positions through its layers, each attending to all), projects the "
            "cross-attention keys and values once, and runs the decoder over n target tokens"
        )
    if spec.cross_attention_keys is not None:  # a fixed input that is not audio (Pix2Struct's padded patches)
        return (
            f"encoder-decoder over a fixed input: per token is one generated (decoder) token, its cross-attention "
            f"reading the encoder's {spec.cross_attention_keys:,} positions whatever the context; the prefill runs the "
            "encoder over those positions (each attending to all), projects the cross-attention keys and values once, "
            "and runs the decoder over n target tokens"
        )
    if spec.encoder_added_positions:  # the input's tokens and a page's patches after them (UDOP)
        added = spec.encoder_added_positions
        return (
            f"encoder-decoder over n input tokens and a page image's {added:,} patches after them: per token is one "
            f"generated (decoder) token, its cross-attention reading the encoder's n + {added:,} positions; the "
            f"prefill runs the patch embedding over the {added:,} patches, the encoder over n + {added:,} positions "
            "(each attending to all), projects the cross-attention keys and values once, and runs the decoder over "
            "n target tokens"
        )
    return (
        "encoder-decoder: per token is one generated (decoder) token with the encoder's output cached; the "
        f"prefill runs the encoder over n input tokens ({_each_attending(spec, 'n')}) and the decoder over n target "
        "tokens, and projects the encoder output's cross-attention keys and values once"
    )


def crossover_contexts(max_context: int, crossover: int | None) -> list[int]:
    """1k, 2k, 4k … up to max_context (itself included), and the crossover as its own row (a context of at least one
    token: a model without an FFN is overtaken at n* = 0)."""
    contexts = []
    context = 1024
    while context < max_context:
        contexts.append(context)
        context *= 2
    contexts.append(max_context)
    if crossover is not None and crossover >= 1 and crossover not in contexts:
        contexts.append(crossover)
    return sorted(set(contexts))


def count_crossover(
    spec: ModelSpec,
    max_context: int,
    info: ModelInfo | None = None,
    measure: Measure = "flops",
    mla_form: MlaForm = "plain",
    dtype: str | None = None,
    bytes_per_element: int | None = None,
) -> CrossoverReport:
    """The context n* where attention's growing cost meets the FFN's, and a table of contexts up to MAX."""
    if measure == "bytes":
        if bytes_per_element is None:
            raise ValueError("bytes_per_element is required to measure bytes")
        profile = bytes_profile(spec, bytes_per_element)
        conventions = [
            "one decode step at batch 1 reads every weight it uses once, and the KV cache",
            "KV cache per layer per token: kv_heads · (qk_head_dim + v_head_dim) elements; MLA: kv_lora_rank + qk_rope_head_dim",
            "sliding-window layers cache at most window tokens; MoE reads only the active experts",
            f"{bytes_per_element} bytes per element ({dtype})",
        ] + (
            ["compressed attention reads the entries it attends to and the indexer's compressed keys"]
            if compressed_conventions(spec)
            else []
        )
    else:
        profile = flops_profile(spec, mla_form)
        conventions = CONVENTIONS + compressed_conventions(spec)
    exact = crossover_context(profile)
    ceil = None if exact is None else -((-exact.numerator) // exact.denominator)
    never = None
    if exact is None:
        what = "attention-score FLOPs" if measure == "flops" else "the KV cache"
        windows = sorted({window for window, _ in profile.slopes if window is not None})
        entries = sorted({cap for (_, cap), _ in profile.compressed if cap is not None})
        if not windows and not entries:
            never = f"no layer attends over the context, so {what} stay at 0"
        else:
            bounds = ([f"within a window of at most {windows[-1]:,} tokens"] if windows else []) + (
                [f"to at most {entries[-1]:,} compressed entries"] if entries else []
            )
            never = (
                f"every layer attends {' and '.join(bounds)}, so {what} level off at "
                f"{plateau(profile) or 0:,} per token, below the FFN's {profile.ffn:,}"
            )
    rows = []
    for context in crossover_contexts(max_context, ceil):
        growing = profile.growing(context)
        total = profile.fixed + growing
        rows.append(
            CrossoverRow(
                context=context,
                ffn=profile.ffn,
                attention_projections=profile.attention_projections,
                attention_context=growing,
                lm_head=profile.lm_head,
                mixer=profile.mixer,
                mixer_state=profile.mixer_state,
                other=profile.other,
                total=total,
                ffn_share=profile.ffn / total,
                is_crossover=context == ceil,
            )
        )
    low, high = rows[0].context, rows[-1].context
    curve_contexts = sorted({round(low * (high / low) ** (step / (CURVE_POINTS - 1))) for step in range(CURVE_POINTS)})
    return CrossoverReport(
        **field_values(info or ModelInfo(model_type=spec.model_type)),
        measure=measure,
        unit="FLOPs" if measure == "flops" else "bytes",
        mla_form=mla_form,
        dtype=dtype if measure == "bytes" else None,
        bytes_per_element=bytes_per_element if measure == "bytes" else None,
        max_context=max_context,
        ffn=profile.ffn,
        crossover_context=None if exact is None else (int(exact) if exact.denominator == 1 else float(exact)),
        crossover_context_ceil=ceil,
        never_reason=never,
        rows=rows,
        curve=[CurvePoint(context=c, attention_context=profile.growing(c)) for c in curve_contexts],
        conventions=conventions,
    )
