"""The architecture-neutral description of a model that the engine reads: structure only.

A family adapter (``ffncalc.families``) turns one family's config.json fields into a
``ModelSpec``; nothing downstream knows which family a spec came from. Every class is a
frozen, hashable value (``values.Value``), so identical layers compare equal and are counted once.

Each block also says where a checkpoint keeps its tensors (``Names``): the parameter
counts, the stored bytes and ``verify`` are all derived from this one description.
"""

from __future__ import annotations

from typing import Literal

from .values import Value

NormKind = Literal["rmsnorm", "layernorm"]
# A "video" stack is a second vision tower that reads videos only (Video-LLaVA's video_tower): counted with the
# vision tower's parameters, never run for an image or a text token.
Stack = Literal["decoder", "encoder", "vision", "video", "audio"]
Component = Literal[
    "ffn",
    "attention",
    "cross_attention",
    "mixer",
    "embedding",
    "lm_head",
    "norm",
    "vision",
    "audio",
    "projector",
    "other",
]
# What a model-level module costs a generated token: it runs for every token, once over the
# encoder's input (cross-attention keys and values), or not while generating at all (a pooler).
# A tower's modules never run for a text token: they run for each patch of an image (a patch
# embedding), or for each token the image becomes in the language model (a projector after merging);
# an audio tower's, for each mel frame of a clip (a convolution at the frame rate), each position its convolutions
# leave (one that strides), or each token the clip becomes in the language model (a projector after pooling); a
# video tower's, for each frame of a video (ffncalc counts no video FLOPs). An encoder over a fixed input of image
# patches runs its patch embedding for each patch ("per_encoder_patch"), not for the class token its layers also carry;
# one over the input's tokens and a page's patches after them (encoder_added_positions), for each of those patches.
Runs = Literal[
    "every_token",
    "once_per_input",
    "not_generating",
    "per_patch",
    "per_image_token",
    "per_audio_frame",
    "per_audio_position",
    "per_audio_token",
    "per_video_frame",
    "per_encoder_patch",
]
ExpertStacking = Literal["stacked", "concatenated"]


class Names(Value):
    """Where a block keeps its parts in a checkpoint: logical part → module name, relative to the layer.

    Parts given the same module name are stored fused, concatenated along the output
    dimension (Phi-3's ``qkv_proj`` holds q, k and v). Parts in ``transposed`` store their
    weight as [in, out] instead of torch's [out, in] (GPT-2's Conv1D, stacked experts).
    With ``parameters`` the names are tensors, not modules: ``gate_up_proj`` and
    ``gate_up_proj_bias`` instead of ``….weight`` and ``….bias`` (gpt-oss's stacked experts).
    Parts in ``groups`` are block-diagonal: each of that many groups maps in / groups inputs to out / groups
    outputs, stored [out, in / groups] (transposed: [groups, in / groups, out / groups], ConvBERT's
    GroupedLinearLayer). Parts in ``pointwise`` are 1 × 1 convolutions: a trailing kernel axis of 1 (SqueezeBERT's
    Conv1d layers, [out, in / groups, 1]).
    """

    modules: tuple[tuple[str, str], ...]
    transposed: frozenset[str] = frozenset()
    parameters: bool = False
    groups: tuple[tuple[str, int], ...] = ()
    pointwise: frozenset[str] = frozenset()

    def __getitem__(self, part: str) -> str:
        for key, module in self.modules:
            if key == part:
                return module
        raise KeyError(part)

    def get(self, part: str, default: str | None = None) -> str | None:
        return next((module for key, module in self.modules if key == part), default)

    def groups_of(self, part: str) -> int:
        """The blocks of a block-diagonal part; 1 for a dense one."""
        return next((count for key, count in self.groups if key == part), 1)

    def prefixed(self, prefix: str) -> Names:
        """The same names under one more module, e.g. 'mlp.' + 'gate_proj'."""
        modules = tuple((key, prefix + module) for key, module in self.modules)
        return Names(modules, self.transposed, self.parameters, self.groups, self.pointwise)


def names(
    transposed: bool | tuple[str, ...] = False,
    parameters: bool = False,
    groups: tuple[tuple[str, int], ...] = (),
    pointwise: tuple[str, ...] = (),
    **modules: str,
) -> Names:
    """Names(q="self_attn.q_proj", …); transposed=True for every part, or a tuple of parts; block-diagonal parts
    and 1 × 1 convolutions by part."""
    flipped = frozenset(modules) if transposed is True else frozenset(transposed or ())
    blocks = tuple((part, count) for part, count in groups if count != 1)
    return Names(tuple(modules.items()), flipped, parameters, blocks, frozenset(pointwise))


class Norm(Value):
    """A normalisation layer: a weight of ``dim`` elements, plus a bias of ``dim`` for LayerNorm, each stored as
    ``shape`` where it is not [dim] (Chameleon's q_norm: [heads, head_dim], its statistics per head)."""

    kind: NormKind
    dim: int
    bias: bool = False
    shape: tuple[int, ...] = ()


Norms = tuple[tuple[str, Norm], ...]  # a layer's norms: (the module name, the norm) in stored order


class Mla(Value):
    """Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values pass through low-rank latents."""

    q_lora_rank: int | None  # None: queries are projected directly from the hidden state
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    latent_norm: NormKind = "rmsnorm"  # on each latent: q_a_layernorm (q_lora_rank), kv_a_layernorm (kv_lora_rank)
    # q_b's input when not the normed latent alone (A.X-K2 reads the latent before and after its norm: 2 · q_lora_rank)
    q_b_input: int | None = None
    # q_b also emits a sigmoid gate of this width for the attention's output, stored fused after the queries (A.X-K2)
    output_gate: int = 0


class Compressor(Value):
    """Keys compressed along the sequence: every ``rate`` tokens pool into one entry of ``head_dim`` (a softmax-gated
    sum), which the attention reads beside its window (DeepSeek-V4's compressed attention).

    Its weights: kv and gate projections (hidden → series · head_dim), a position bias [rate, series · head_dim]
    and an RMSNorm of head_dim. ``series`` = 2 when each entry also pools the previous window's tokens (overlapping
    windows): every token then feeds two series of head_dim.
    """

    rate: int
    head_dim: int
    names: Names  # kv, gate, position_bias, norm
    series: int = 1


class Indexer(Value):
    """A lightning indexer (DeepSeek-V3.2's sparse attention, GLM-5): it scores every key with a few small
    heads, and the attention then reads only the ``top_k`` keys it picks.

    Its query reads ``q_input`` (the query latent, q_lora_rank) through wq_b; its single key head reads
    the hidden state through wk, then a LayerNorm; weights_proj weighs its heads per token. With a
    ``compressor`` its keys are compressed entries instead (no wk, no k_norm), and it picks among those.
    """

    heads: int
    head_dim: int
    q_input: int
    top_k: int
    names: Names  # wq_b, wk, k_norm, weights_proj
    k_norm: Norm | None = None
    shared: bool = (
        False  # reuses the keys the previous layer's indexer picked: no weights, no scoring, no key cache (GLM-5)
    )
    compressor: Compressor | None = None  # its keys are compressed entries of its own (DeepSeek-V4's CSA)


class BlockSparse(Value):
    """BigBird's block-sparse attention (modeling_big_bird.py's bigbird_block_sparse_attention, attention_type
    "block_sparse"): over an input padded to P positions, P / block_size blocks of block_size queries, where the first
    and last blocks (global) read all P keys, the second and second-to-last 4 + random_blocks blocks (the first three or
    last three, the other end's global block and random ones), and every middle block 5 + random_blocks blocks (its
    own and its neighbours, the two global blocks and random_blocks drawn at random, as many whatever is drawn). Inputs
    of at most full_up_to tokens, too short for it, are attended fully instead (transformers switches to
    original_full), unpadded."""

    block_size: int
    random_blocks: int

    @property
    def full_up_to(self) -> int:
        """(5 + 2 · random_blocks) · block_size: the longest input transformers attends fully instead."""
        return (5 + 2 * self.random_blocks) * self.block_size

    @property
    def middle_keys(self) -> int:
        """The keys a query of a middle block reads: (5 + random_blocks) · block_size."""
        return (5 + self.random_blocks) * self.block_size

    def keys(self, positions: int) -> int:
        """Σ over the queries of the keys each scores over POSITIONS (P, a multiple of block_size above full_up_to):
        P² when attended fully; else b · (2P + 2 · (4 + r) · b + (P / b − 4) · (5 + r) · b)."""
        if positions <= self.full_up_to:
            return positions * positions
        b, r = self.block_size, self.random_blocks
        return b * (2 * positions + 2 * (4 + r) * b + (positions // b - 4) * (5 + r) * b)


class Pooling(Value):
    """Where a layer runs over its stack's input pooled along the sequence (Funnel Transformer's blocks,
    modeling_funnel.py's pool_tensor and stride_pool): the input halved ``times`` times before its queries, its output
    and its FFN, ``keys_times`` before its keys and values (times − 1 in the layer that pools its queries only, the
    first of a block with pool_q_only; else times).

    One halving of L positions keeps ⌈L / 2⌉ (avg_pool2d with ceil_mode); with ``keep_first`` (separate_cls) the first
    position is kept apart and pooled with the others again (⌈L / 2⌉ with ``drop_last``, truncate_seq, which drops the
    last position first; ⌈(L + 1) / 2⌉ without it), and a sequence of at most 2 positions (1 without keep_first) is not
    halved (FunnelEncoder's pooling_flag). The relative positions (Attention.relative_shift) are halved without that
    floor.

    ``fixed_queries`` and ``fixed_keys``: the positions the queries (with the output and the FFN) and the keys and values
    run over whatever the input's length, where not the input's (Perceiver's layers: num_latents latents read the input
    by cross-attention, then attend among themselves; its decoder's max_position_embeddings queries read the latents);
    0: the input's, halved as above."""

    times: int
    keys_times: int
    keep_first: bool = False
    drop_last: bool = False
    fixed_queries: int = 0
    fixed_keys: int = 0

    def halved(self, length: int, floor: bool = True) -> int:
        """One halving of LENGTH positions; FLOOR: not below the length pooling stops at."""
        if floor and length <= (2 if self.keep_first else 1):
            return length
        return (length + 1) // 2 if not self.keep_first or self.drop_last else (length + 2) // 2

    def length(self, positions: int, times: int, floor: bool = True) -> int:
        """POSITIONS halved TIMES times."""
        for _ in range(times):
            positions = self.halved(positions, floor)
        return positions

    def queries(self, positions: int) -> int:
        """The positions the layer's queries, output and FFN run over for an input of POSITIONS."""
        return self.fixed_queries or self.length(positions, self.times)

    def keys(self, positions: int) -> int:
        """The positions its keys and values run over."""
        return self.fixed_keys or self.length(positions, self.keys_times)


class Attention(Value):
    """One layer's attention: q, k, v, o (or MLA's latents), with the names it is stored under.

    ``qk_head_dim`` and ``v_head_dim`` are per-head widths; for MLA they are the
    decompressed widths (nope + rope, and v_head_dim), the ones attention scores use.
    """

    hidden_size: int
    num_heads: int
    num_kv_heads: int
    qk_head_dim: int
    v_head_dim: int
    names: Names
    q_bias: bool = False
    k_bias: bool = False
    v_bias: bool = False
    o_bias: bool = False
    q_norm: Norm | None = None  # per head (Qwen3, Gemma-3: dim = head_dim) or across heads (OLMo-2)
    k_norm: Norm | None = None
    q_gate: bool = False  # q_proj also emits a sigmoid gate for the output, doubling its width (Qwen3-Next)
    sinks: bool = False  # one learned logit per head (gpt-oss)
    window: int | None = None  # sliding-window size; None attends to the whole context
    chunked: bool = False  # the window is a fixed chunk (Llama-4), not a sliding one
    # The window is two-sided, window = 2w + 1 keys (w on either side of each query, and its own), and scored in
    # overlapping chunks (Longformer's sliding_chunks): over the input padded to P positions, QK runs P/w − 1 chunks of
    # 2w queries × 2w keys and the values P/w chunks of w queries × 3w keys, so a head costs 2 · qk_head_dim · 4w(P − w)
    # + 2 · v_head_dim · 3w · P whatever the input's length below P (compute.sliding_chunks_flops).
    two_sided_chunks: bool = False
    # The window is two-sided and scored in blocks (LongT5's local attention): (block, blocks). The input is padded to
    # P_b, a multiple of block, and each block's queries are scored against the keys of the blocks blocks about it (its
    # own and one either side: 3, zeros past the ends), all of them, masked after; so a head costs
    # (2 · qk_head_dim + 2 · v_head_dim) · blocks · block · P_b whatever the input's length below P_b, while the
    # projections run over the input's tokens (compute.scored_blocks_flops). window: what one query reads.
    scored_blocks: tuple[int, int] | None = None
    # Learned tokens beside the input that the layer runs too (Pegasus-X's embed_global, num_global_tokens of them):
    # their queries read their keys and every position's, every position's queries read theirs besides the window's,
    # and the layer's projections and FFN run over them, G more positions whatever the input's length
    # (compute.scored_blocks_flops, ContextProfile.once_projections and once_ffn).
    global_tokens: int = 0
    # The attention runs over its input with this many more positions, zeros split between the two ends (Pegasus-X's
    # staggered blocks: block_size / 2 a side, every other layer): its projections and scores run over them, the
    # layer's FFN does not.
    staggered_by: int = 0
    # Besides its window, each query reads one summary key and value per this many of the layer's input tokens (LongT5's
    # transient-global, global_block_size): S = n // summary_every summaries, each the sum of its tokens' inputs (a
    # one-hot matmul, 2 · n · S · hidden_size), normed, then projected by k and v (compute.scored_blocks_flops,
    # summary_projection_flops). 0: none.
    summary_every: int = 0
    # Block-sparse (BigBird): the scores a prompt computes are BlockSparse.keys of its padded length, bidirectional; a
    # query reads min(n, block_sparse.middle_keys) keys (what a middle block's does), its keys all cached.
    block_sparse: BlockSparse | None = None
    # Relative-shift positions (Funnel's "relative_shift" attention, FunnelRelMultiheadAttention): besides its keys,
    # each query is scored against R relative-position embeddings (spec.relative_positions: 2 · its positions, + its
    # keys' where the layer pools its queries), each projected once a layer by a [hidden, heads · qk_head_dim] kernel
    # (r_kernel: 2 · hidden · heads · qk_head_dim a position, with the projections), and 2 · heads · qk_head_dim a query
    # and position (with the scores); and against ``segments`` token-type embeddings (seg_embed), 2 · heads ·
    # qk_head_dim each a query. Their gather and masks are no matmul.
    relative_shift: bool = False
    segments: int = 0
    mla: Mla | None = None
    indexer: Indexer | None = None  # sparse attention: only the keys the indexer picks are attended
    relative_position_buckets: int = 0  # T5: a learned bias per bucket and head, held by a stack's first layer
    # Each score also adds the query times a learned embedding of that key's distance (SpeechT5's encoder, pe_k): one
    # more product of qk_head_dim per head and key; the stack's table of distances is an extra of the model.
    relative_keys: bool = False
    # The attention runs this many times over the same queries and keys, each run reading its own share of the values
    # (DiffLlama's two calls, each over one half of the value heads): the scores and the values cost passes × per key.
    passes: int = 1
    # q and o are routed experts (JetMoE's mixture of attention heads): (experts, per token). Each expert holds a q that
    # emits, and an o that reads, num_heads / per token of the heads, stored stacked [experts, out, in]; a token runs
    # per token of them, and attends with their heads together (num_heads), over the keys and values all share.
    q_o_experts: tuple[int, int] | None = None
    # Attends to at most this many keys, picked among those cached by a score that costs no matmul per key (Doge's
    # dynamic mask: the keys whose gate, computed from each key's values as it is projected, is largest); every key
    # stays cached, as without it.
    picked_keys: int | None = None
    kv_input_size: int | None = None  # cross-attention: the width k and v read (the encoder's); None: hidden_size
    # what v reads when not what k reads (MobileBERT: q and k read a bottleneck of the layer's input, v the input itself)
    v_input_size: int | None = None
    q_width: int | None = None  # q's output and o's input when not heads × head_dim (DBRX: d_model)
    input_size: int | None = (
        None  # what q (and k, v without kv_input_size) read when not hidden_size (Zamba2: 2 · hidden)
    )
    o_input: int | None = None  # o's input when neither q_width nor heads × v_head_dim (Helium: hidden_size)
    # Reads the keys and values an earlier layer of its kind computed (Gemma 3n, Gemma 4's last num_kv_shared_layers):
    # no k or v projection, and nothing cached of its own; its queries still attend to every cached key.
    kv_shared: bool = False
    values_from_keys: bool = False  # v is k's projection (Gemma 4's attention_k_eq_v): no v projection
    values_are_keys: bool = False  # the keys are also the values (DeepSeek-V4): no v projection, each key cached once
    q_latent: int | None = (
        None  # queries through a latent without MLA: q_a (→ q_latent), its RMSNorm q_a_layernorm, q_b
    )
    o_latent: int | None = None  # the output through a latent: o_a (o input → o_latent), o_b (o_latent → hidden)
    o_groups: int = 1  # o_a is block-diagonal: each group maps its o input / o_groups values to o_latent / o_groups
    # Besides its window, the attention reads compressed entries of the keys: n // rate at context n, or the indexer's
    # top_k of them (compute.attention_reach).
    compressor: Compressor | None = None

    @property
    def kind(self) -> Literal["mla", "mha", "mqa", "gqa"]:
        """mla, mha (kv heads = heads), mqa (one kv head) or gqa (in between)."""
        if self.mla is not None:
            return "mla"
        if self.num_kv_heads == self.num_heads:
            return "mha"
        if self.num_kv_heads == 1:
            return "mqa"
        return "gqa"


class DenseFfn(Value):
    """A position-wise feed-forward block: gated (gate, up, down) or plain (up, down)."""

    hidden_size: int
    intermediate_size: int
    gated: bool
    activation: str
    names: Names
    bias: bool = False


class MoeFfn(Value):
    """A mixture-of-experts block: a router picks ``experts_per_token`` of ``num_experts`` per token.

    ``expert`` is one routed expert, its names relative to ``names["experts"]``: a module per
    expert when that name holds ``{e}``, else one tensor per part with the experts stacked on a
    leading axis (or concatenated along the first, ``stacking="concatenated"``, DBRX).
    Shared experts run for every token; families that fuse them into one MLP of width
    num_shared_experts × expert width (DeepSeek) store that MLP as ``shared``.
    With ``latent_size`` the routed experts run at that width, between a projection down from
    the hidden state and one back up (Nemotron-H's latent MoE).
    """

    hidden_size: int
    num_experts: int
    experts_per_token: int
    expert: DenseFfn
    names: Names  # router, experts; and where present shared_expert_gate, latent_in, latent_out
    shared: DenseFfn | None = None
    num_shared_experts: int = 0
    shared_expert_gate: bool = False  # a Linear(hidden, 1) that scales the shared expert's output (Qwen2-MoE)
    router_bias: bool = False
    stacking: ExpertStacking = "stacked"
    latent_size: int | None = None
    zero_experts: int = 0  # identity experts the router may also pick, which hold and cost nothing (LongCat-Flash)
    # The width the router's linear reads when not hidden_size: the last layer of a router MLP whose other layers the
    # Layer holds (ZAYA's router_mlp.out_proj reads router_hidden_size)
    router_input: int | None = None
    # The router also scores each shared expert, its weight in the mix (Inkling): num_shared_experts more rows
    scored_shared: bool = False
    # The shared experts kept stacked like routed ones, each a part of [num_shared_experts, …] tensors (Inkling);
    # ``shared`` is then one of them
    shared_stacked: bool = False


Ffn = DenseFfn | MoeFfn


class Projection(Value):
    """A linear map inside a mixer or a layer: its part, stored module, widths, bias and component."""

    part: str
    module: str
    in_features: int
    out_features: int
    bias: bool = False
    component: Component = "mixer"


class Conv(Value):
    """A depthwise causal convolution over ``channels``, ``kernel`` positions wide (weight [channels, 1, kernel])."""

    module: str
    channels: int
    kernel: int
    bias: bool = True


class Parameter(Value):
    """A learned tensor that no block above describes (Mamba's A_log, ERNIE's expert-score bias): component, part, stored name, shape.

    ``matmul``: a token is multiplied by it, as by a linear weight (RG-LRU's block-diagonal gates, [heads, width, width]).
    ``of``: the part holds that many alternatives, of which a token uses one (X-MOD's adapter per language).
    """

    component: Component
    part: str
    name: str
    shape: tuple[int, ...]
    matmul: bool = False
    of: int = 1


class Mixer(Value):
    """A sequence mixer that carries a fixed-size state instead of attending over the context:
    Mamba, Mamba-2, Gated DeltaNet, lightning attention, short convolutions …

    Its cost per token does not grow with the context: the projections and convolutions, and
    ``state_update_flops`` for reading and writing its ``state_elements`` (its builder in
    ``families/mixers.py`` derives both).
    """

    kind: str  # an identifier: "mamba2", "gated_deltanet" … (render names it for tables)
    projections: tuple[Projection, ...]
    convs: tuple[Conv, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    norms: Norms = ()
    state_elements: int = 0  # the recurrent state one sequence carries, besides the convolutions' windows
    # The recurrent state's element type where the model's config names one (Qwen3.5's mamba_ssm_dtype), as
    # safetensors names it ("F32"); None: the cache's, as the convolutions' windows always are.
    state_dtype: str | None = None
    state_update_flops: int = 0  # per token, besides the projections and convolutions
    component: Component = (
        "mixer"  # where its weights count: "attention" when the checkpoint keeps it in self_attn (MiniMax, Kimi)
    )
    # What the mixer computes that is no matrix multiplication and no figure counts, said with the FLOPs (FNet's
    # Fourier transform); "" when its projections, convolutions and state update are all it costs.
    not_counted: str = ""

    @property
    def conv_state_elements(self) -> int:
        """The last kernel − 1 inputs each convolution keeps: Σ channels · (kernel − 1)."""
        return sum(conv.channels * (conv.kernel - 1) for conv in self.convs)


class Layer(Value):
    """One layer: attention (or another mixer), FFN, and the norms around them by module name.

    ``name`` is the layer's module in the checkpoint with ``{i}`` for its index in its stack
    (``model.layers.{i}``). A hybrid stack's layer may hold only a mixer, only attention or
    only an FFN (Nemotron-H).
    """

    name: str
    attention: Attention | None
    ffn: Ffn | None
    norms: Norms
    mixer: Mixer | None = None
    cross_attention: Attention | None = None  # decoder layers of an encoder-decoder
    stack: Stack = "decoder"
    parameters: tuple[Parameter, ...] = ()  # learned tensors of the layer no block above holds
    projections: tuple[
        Projection, ...
    ] = ()  # linear maps of the layer no block above holds (Gemma 3n's per-layer input gate)
    # FLOPs per token of matmuls that no weight describes, counted under other (Gemma 3n's AltUp: its router runs
    # twice, and its n copies of the hidden state are mixed by per-token coefficients); the family derives them.
    other_flops: int = 0
    # Modules (prefixes of tensor names) the layer runs but another layer of the stack holds: Zamba2's shared
    # transformer blocks. Their FLOPs count here, at every use; their parameters and stored tensors, there only.
    borrowed: tuple[str, ...] = ()
    # Stored under the previous layer's index in its stack: one checkpoint layer that runs as two in a row
    # (LongCat-Flash's layer holds two attention blocks, self_attn.0 and self_attn.1, each with its MLP).
    continues: bool = False
    # Stored under its index in its stack less this: a stack kept in stages that each number their layers from 0
    # (timm's blocks.{stage}.{i}, the stage written in the name, index_offset the layers of the stages before it).
    index_offset: int = 0
    # The layer runs over its stack's input pooled (Funnel's blocks after the first): Pooling says how many positions
    # its queries and its keys run over; None: all of them.
    pooling: Pooling | None = None


class Linear(Value):
    """A linear map outside the layers (OPT's project_in/out, BERT's pooler)."""

    in_features: int
    out_features: int
    bias: bool = False


class Table(Value):
    """A learned table looked up, not multiplied (token-type embeddings, a bias vector)."""

    rows: int
    dim: int = 1


class PatchEmbedding(Value):
    """A convolution that cuts an image into patches and projects each: weight [out, channels, *patch] (+ bias [out]).

    ``patch`` is (height, width), or (frames, height, width) for a tower that also reads video (Qwen-VL).
    """

    channels: int
    patch: tuple[int, ...]
    out_features: int
    bias: bool = False


class LearnedTensor(Value):
    """A learned tensor stored under the module's own name, not as ``.weight`` (an ``nn.Parameter``:
    Llama-4's class embedding, Gemma 3's projection matrix). ``matmul``: tokens are multiplied by it."""

    shape: tuple[int, ...]
    matmul: bool = False


class Extra(Value):
    """A model-level module outside the layers: the component it counts under, its stored name, and how often it runs."""

    component: Component
    name: str
    module: Linear | Norm | Table | PatchEmbedding | LearnedTensor
    runs: Runs = "every_token"
    # Another module's weight, multiplied again (NeoMME's unembedding_projection, tied to its embedding_projection): its
    # FLOPs count here; its parameters and stored tensor, with the module that holds it.
    borrowed: bool = False


class StoredTensor(Value):
    """A tensor a checkpoint may hold beside the parameters: its name (``{i}`` for a layer index) and shape."""

    name: str
    shape: tuple[int, ...]


class CheckpointExtra(Value):
    """What a published checkpoint may store that is not a parameter of the model's modules, and why.

    ``tensors`` are named with ``{i}`` where they repeat per layer (``per_layer``: the indices);
    ``layers`` are whole decoder layers at those indices past the last one (multi-token prediction).
    """

    name: str
    reason: str
    tensors: tuple[StoredTensor, ...] = ()
    per_layer: tuple[int, ...] = ()
    layers: tuple[tuple[int, Layer], ...] = ()
    likely: bool = True  # the published checkpoints of such a config store it (False: only some do)
    buffer: bool = False  # a persistent buffer of transformers' modules: saved with every checkpoint it writes


class NotSaved(Value):
    """Parameters the model builds that its checkpoints may lack: transformers leaves them out when it saves
    (the class's ``_keys_to_ignore_on_save``), as they are computed when the model is made (Marian's
    sinusoidal position tables). ``names`` are stored names; ``reason`` says why."""

    names: tuple[str, ...]
    reason: str


class ModelNames(Value):
    """Where the modules outside the layers are stored, and the prefix of the base model.

    transformers loads a checkpoint saved from the base model (no ``base_model_prefix``) into
    the class with a head, so a stored name may lack the prefix.
    """

    embed_tokens: str
    final_norm: str
    lm_head: str = "lm_head"
    position_embeddings: str = ""
    base_model_prefix: str = "model"
    lm_head_bias: str = ""  # where the head's bias is stored, when not beside its weight (BERT: cls.predictions.bias)
    # The token table is a tensor stored under embed_tokens itself, not embed_tokens.weight (Molmo2's wte.embedding)
    embedding_parameter: bool = False


class ImageInput(Value):
    """How a vision tower reads an image: the family's resizing rule, its patches, and the tokens they become.

    ``resize``: "fixed" (every image becomes ``size`` × ``size``), "longest_edge" (scaled down to fit ``size``,
    each side then rounded up to whole patches), "multiple" (each side rounded to a multiple of ``size``),
    "tiles" (cut into ``size`` × ``size`` tiles; the FLOPs are per tile), "budget" (every image padded to
    ``size`` patches, the padding computed too), "patch_budget" (scaled down, never up, to at most ``size``
    patches and ``max_side`` patches a side, then each side padded to whole merges) or "pad" (never scaled, each side
    padded up to a multiple of ``size``). Patches are ``patch_size``
    square; ``merge`` × ``merge`` patches become one token (a patch merger, pixel shuffle; ``merge`` rows ×
    ``merge_columns`` columns where they differ), or the patches are pooled to ``pooled_tokens``.
    ``window_units``: the side, in merged units, of the 2-D windows that layers with a window attend within
    (Qwen2.5-VL); ``extra_tokens``: a class token the layers also carry (Llama 4).
    """

    patch_size: int
    resize: Literal["fixed", "longest_edge", "multiple", "tiles", "budget", "patch_budget", "pad"]
    size: int
    merge: int = 1
    pooled_tokens: int | None = None
    window_units: int | None = None
    extra_tokens: int = 0
    max_side: int | None = None  # "patch_budget": the most patches along either side
    merge_columns: int | None = None  # the columns of patches one token merges, where not ``merge``


class AudioInput(Value):
    """How a speech encoder reads a clip: in windows of ``frames`` log-mel frames (``frames_per_second`` of them a
    second; the last window padded), which its convolutions reduce to ``positions`` encoder positions (Whisper:
    3,000 frames at 100 a second, 30 s, 1,500 positions), run by the layers of ``stack`` ("encoder" in an
    encoder-decoder, "audio" in a tower). An audio tower hands ``tokens`` per window on to the language model
    (after any pooling); an encoder-decoder, none (its decoder reads the positions by cross-attention)."""

    frames: int
    frames_per_second: int
    positions: int
    stack: Stack
    tokens: int | None = None


class ModelSpec(Value):
    """Everything the engine needs to count a model's parameters, FLOPs, bytes and tensors."""

    model_type: str
    hidden_size: int
    vocab_size: int
    layers: tuple[Layer, ...]
    final_norm: Norm | None
    tie_word_embeddings: bool
    names: ModelNames
    position_embeddings: int = 0  # rows of a learned absolute position table (GPT-2); 0 for rotary
    embedding_dim: int | None = None  # the token table's width when it differs from hidden (OPT-350m)
    # An untied head's input width when it is not the token table's (RemBERT's output_embedding_size)
    lm_head_dim: int | None = None
    lm_head_rows: int | None = (
        None  # the head's outputs when fewer than the token table's rows (Apertus 1.5's pruned head)
    )
    # The head's rows a checkpoint stores, when more than its outputs: zero rows padding it, dropped on load and written
    # again on save (Inkling 2's unembed, padded to vocab_size); stored bytes, never parameters or FLOPs.
    lm_head_stored_rows: int | None = None
    lm_head_bias: bool = False
    lm_head: bool = True  # False for a base model or an encoder without a language-modelling head
    extras: tuple[Extra, ...] = ()
    checkpoint_extras: tuple[CheckpointExtra, ...] = ()
    image: ImageInput | None = None  # a multimodal model's vision tower: how it reads an image
    audio: AudioInput | None = None  # a speech encoder with a fixed window: how it reads a clip
    # The encoder positions every cross-attention reads, whatever the context (Whisper's encoder output is always
    # max_source_positions long); None: as many as the context (the encoder's input is as long as the decoder's).
    cross_attention_keys: int | None = None
    # Of those positions, the ones no input patch made (ViT's class token): the encoder's layers run over them, its
    # patch embedding ("per_encoder_patch") does not.
    encoder_class_tokens: int = 0
    # The encoder's layers run over its input padded to a multiple of this (Longformer pads to its largest
    # attention_window, and drops the padding after the last layer): what they cost is the padded length's, what reads
    # their output (the head, a decoder's cross-attention) the input's. None: no padding.
    encoder_pad_to: int | None = None
    # The encoder pads only inputs longer than this (BigBird pads to whole blocks only where it runs block-sparse, above
    # BlockSparse.full_up_to tokens); 0: every input is padded.
    encoder_pad_above: int = 0
    # Positions an encoder over the input's tokens also reads after them, as many whatever the context (UDOP's page:
    # the image's patches follow the text tokens): its layers run over n + these, every cross-attention reads n +
    # these, and its patch embedding ("per_encoder_patch") runs once for each.
    encoder_added_positions: int = 0
    # The positions the head runs over in a forward, whatever the input's length (Perceiver's masked LM decodes
    # max_position_embeddings queries); None: the input's tokens.
    output_positions: int | None = None
    not_saved: NotSaved | None = None  # parameters a checkpoint saved by transformers leaves out
    # Stacked tensors (by the end of their name) that transformers transposes on load, axes 1 and 2, when a
    # checkpoint stores them that way (its conversion_mapping: Transpose(1, 2, check_dims=True)).
    transposed_on_load: tuple[str, ...] = ()
