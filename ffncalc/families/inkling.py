"""Thinking Machines' Inkling text model (inkling_text): attention with short convolutions on its keys and values and
a relative-position bias each token mixes from a learned bank, short convolutions on each sublayer's output, and an
MoE whose router also weighs its shared experts."""

from __future__ import annotations

import math
from functools import cached_property, partial
from itertools import accumulate, pairwise
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InvalidConfigError
from ..schema import (
    MAX_LAYERS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    Width,
    derives,
)
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    Mixer,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Names,
    Norm,
    Parameter,
    Projection,
    Table,
    names,
)
from ..values import Value, replace
from .base import DecoderConfig
from .blocks import MlpLayerTypes, entries_check
from .deepseek import correction_bias_extra
from .gemma import STACKED_EXPERTS
from .multimodal import MultimodalLayers, Renamings, saved_layer, saved_module
from .registry import family, tower
from .step3p7 import VISION_MLP
from .towers import Tower, TowerConfig, audio_module, tower_module
from .vision import CLIP_ATTENTION

INKLING_SHARED = names(
    gate="mlp.shared_experts.gate_proj",
    up="mlp.shared_experts.up_proj",
    down="mlp.shared_experts.down_proj",
    parameters=True,
)


class HeadShape(Value):
    """One Inkling attention's heads, key-value heads, head width and relative-bias reach."""

    heads: int
    kv_heads: int
    head_dim: int
    reach: int


def head_shape(config: InklingTextConfig | Inkling2TextConfig, sliding: bool) -> HeadShape:
    """A sliding layer's swa_ heads within sliding_window_size, or a full layer's heads reaching rel_extent (Inkling
    and Inkling 2 alike)."""
    if sliding:
        return HeadShape(
            config.swa_num_attention_heads,
            config.swa_num_key_value_heads,
            config.swa_head_dim,
            config.sliding_window_size,
        )
    return HeadShape(config.num_attention_heads, config.num_key_value_heads, config.head_dim, config.rel_extent)


@family(
    "inkling_text",
    transformers="InklingTextConfig",
    architecture="Inkling",
    model_class="InklingForCausalLM",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={
        "dense_mlp_idx": "no field of InklingTextConfig: __post_init__ takes it from the config's keys",
        "dense_intermediate_size": "no field of InklingTextConfig: __post_init__ takes it from the config's keys",
        "tie_word_embeddings": "no field of InklingTextConfig, and InklingForCausalLM ties nothing whatever a config says",
    },
)
class InklingTextConfig(MlpLayerTypes, DecoderConfig):
    """configuration_inkling.py / modeling_inkling.py (InklingForCausalLM). layer_types: hybrid (full attention of
    num_attention_heads, num_key_value_heads, head_dim) or hybrid_sliding (swa_num_attention_heads,
    swa_num_key_value_heads, swa_head_dim, within sliding_window_size); default sliding except every sixth layer
    (or the local_layer_ids). InklingAttention: q, k, v, o without biases, an RMSNorm over each query and key head,
    k_sconv and v_sconv (depthwise causal convolutions of sconv_kernel_size = conv_kernel_size taps over k and v,
    no bias), r_proj (hidden → heads · d_rel) whose per-head states mix rel_logits_proj.proj (d_rel × the layer's
    reach: rel_extent, or sliding_window_size in a sliding layer) into a bias per distance: heads · d_rel · reach
    multiply-adds a token, counted under other. Each layer also runs attn_sconv and mlp_sconv (hidden channels) on its
    sublayers' outputs.

    mlp_layer_types (default: dense below dense_mlp_idx (0), sparse after) picks InklingMLP (a SwiGLU of
    intermediate_size and a global_scale) or InklingMoE: a sigmoid router over n_routed_experts + n_shared_experts
    (the shared experts' weights in the mix) with a global_scale and an e_score_correction_bias buffer, stacked
    experts of moe_intermediate_size (num_experts_per_tok a token) and n_shared_experts stacked shared experts of the
    same width, every one run. A checkpoint's dense_intermediate_size is the dense MLP's width, its
    intermediate_size then the experts' (InklingTextConfig.__post_init__). The embeddings are normalised
    (embed_tokens.embed_norm); lm_head is never tied. The sequence keeps each convolution's last
    conv_kernel_size − 1 inputs."""

    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = STACKED_EXPERTS
    informational_fields = DecoderConfig.informational_fields | {"tie_word_embeddings", "num_mtp_layers"}

    hidden_act: Name
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    swa_num_attention_heads: HeadCount
    swa_num_key_value_heads: HeadCount
    swa_head_dim: Width
    sliding_window_size: Width
    d_rel: Width
    rel_extent: Width
    local_layer_ids: Annotated[list[LayerIndex] | None, Field(max_length=MAX_LAYERS)]
    layer_types: Annotated[list[Literal["hybrid", "hybrid_sliding"]], Field(max_length=MAX_LAYERS)] | None
    max_position_embeddings: Annotated[int, Field(strict=True)]
    conv_kernel_size: Width
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None
    intermediate_size: Width
    moe_intermediate_size: Width
    n_routed_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    n_shared_experts: ExpertCountOrZero
    num_mtp_layers: LayerIndex | None
    dense_mlp_idx: LayerIndex = 0
    dense_intermediate_size: Width | None = None

    _check_layer_types = entries_check("layer_types", exact=True)
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)

    @derives("layer_types", "hybrid_sliding except every sixth layer (or on local_layer_ids)")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        count = self.num_hidden_layers
        local = (
            set(self.local_layer_ids) if self.local_layer_ids is not None else {i for i in range(count) if (i + 1) % 6}
        )
        return ["hybrid_sliding" if i in local else "hybrid" for i in range(count)]

    @derives("mlp_layer_types", "dense below dense_mlp_idx (0), sparse after")
    def default_mlp_kinds(self) -> list[str]:
        dense = min(self.dense_mlp_idx, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    def widths(self) -> tuple[int, int]:
        """(dense MLP, expert): dense_intermediate_size and intermediate_size where a checkpoint gives the former."""
        if self.dense_intermediate_size is not None:
            return self.dense_intermediate_size, self.intermediate_size
        return self.intermediate_size, self.moe_intermediate_size

    def unused_fields(self) -> set[str]:
        unused = set() if self.layer_types is None else {"local_layer_ids"}
        if self.mlp_layer_types is not None:
            unused.add("dense_mlp_idx")
        if self.dense_intermediate_size is not None:
            unused.add("moe_intermediate_size")
        return unused

    def moe(self) -> MoeFfn:
        expert = self.widths()[1]
        moe = self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok,
            expert,
            shared_width=expert if self.n_shared_experts else 0,
            num_shared_experts=self.n_shared_experts,
            shared_names=INKLING_SHARED,
        )
        return replace(moe, scored_shared=True, shared_stacked=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden, kernel = self.hidden_size, self.conv_kernel_size
        sliding = self.kinds()[index] == "hybrid_sliding"
        shape = head_shape(self, sliding)
        heads, kv_heads, head_dim, reach = shape.heads, shape.kv_heads, shape.head_dim, shape.reach
        norm = self.rms_norm(head_dim)
        attention = self.attention(
            self.sliding_window_size if sliding else None,
            num_heads=heads,
            num_kv_heads=kv_heads,
            qk_head_dim=head_dim,
            v_head_dim=head_dim,
            q_norm=norm,
            k_norm=norm,
        )
        kv = kv_heads * head_dim
        convs = (
            Parameter("attention", "sconv", "self_attn.k_sconv.conv1d.weight", (kv, 1, kernel), matmul=True),
            Parameter("attention", "sconv", "self_attn.v_sconv.conv1d.weight", (kv, 1, kernel), matmul=True),
            Parameter("other", "sconv", "attn_sconv.conv1d.weight", (hidden, 1, kernel), matmul=True),
            Parameter("other", "sconv", "mlp_sconv.conv1d.weight", (hidden, 1, kernel), matmul=True),
        )
        # The convolutions' windows: each keeps its last kernel − 1 inputs.
        windows = Mixer(kind="short_conv", projections=(), state_elements=(kernel - 1) * (2 * kv + 2 * hidden))
        relative = Parameter("attention", "relative_bias", "self_attn.rel_logits_proj.proj", (self.d_rel, reach))
        r_proj = Projection("r_proj", "self_attn.r_proj", hidden, heads * self.d_rel, component="attention")
        ffn: DenseFfn | MoeFfn
        if self.sparse(index):
            ffn = self.moe()
            scale = Parameter("ffn", "router", "mlp.gate.global_scale", (1,))
        else:
            ffn = self.gated_ffn(self.widths()[0])
            scale = Parameter("ffn", "global_scale", "mlp.global_scale", (1,))
        return self.layer(
            attention,
            ffn,
            mixer=windows,
            projections=(r_proj,),
            parameters=(*convs, relative, scale),
            other_flops=2 * heads * self.d_rel * reach,
        )

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window_size if kind == "hybrid_sliding" else None for kind in self.kinds()]

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        extras = self.rotary_extras()
        return extras + (correction_bias_extra(self.layer_name, sparse, self.n_routed_experts),) if sparse else extras

    def to_spec(self) -> ModelSpec:
        embed_norm = Extra("norm", "model.embed_tokens.embed_norm", Norm("rmsnorm", self.hidden_size))
        return replace(super().to_spec(), tie_word_embeddings=False, extras=(embed_norm,))


# --- Inkling 2 (inkling2_text): Inkling's attention rebuilt, with attention over earlier blocks' outputs ------------

#: Inkling 2's attention as its checkpoints name it (conversion_mapping.py's "inkling2_text", reverted): q, k, v and o
#: are self_attn.{q,k,v}_proj.linear and o_proj.linear in the model.
INKLING2_ATTENTION = names(q="attn.wq_du", k="attn.wk_dv", v="attn.wv_dv", o="attn.wo_ud")
#: The stacked experts, saved as w13_weight [E, 2I, H] (gate and up interleaved) and w2_weight [E, H, I].
INKLING2_EXPERTS = names(gate="w13_weight", up="w13_weight", down="w2_weight", parameters=True)


def block_attention_flops(queries: int, sources: int, hidden: int) -> int:
    """One token's attention of QUERIES learned queries over SOURCES block states of HIDDEN values (the scores, then
    the weighted sum): 2 FLOPs · 2 · queries · sources · hidden."""
    return 4 * queries * sources * hidden


@family(
    "inkling2_text",
    transformers="Inkling2TextConfig",
    architecture="Inkling 2",
    model_class="Inkling2ForCausalLM",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={
        "tie_word_embeddings": "Inkling2ForCausalLM ties nothing (_tied_weights_keys = {}), whatever a config says."
    },
)
class Inkling2TextConfig(DecoderConfig):
    """configuration_inkling2.py (Inkling2TextConfig) / modeling_inkling2.py (Inkling2ForCausalLM). layer_types:
    hybrid (Inkling2FullAttention: num_attention_heads, num_key_value_heads, head_dim) or hybrid_sliding
    (Inkling2SlidingAttention: the swa_ fields, within sliding_window_size); default sliding but every sixth layer.

    Both attentions: q, k, v and o without biases; a learned scale [heads, head_dim] before each query head's L2 clip
    (none on keys and values); o gated by a sigmoid of a projection of the layer's input (gate_attn); a sink logit per
    head and token projected from the input (attn_sink_proj); a relative-position bias, per-head states (wr_du, hidden
    → heads · d_rel, their own L2-clip scale) mixing proj (d_rel × reach: rel_extent, or sliding_window_size in a
    sliding layer), heads · d_rel · reach multiply-adds a token, counted under other. Keys and values pass a short
    convolution of conv_kernel_size taps: static in a sliding layer (k_sconv.weight), dynamic in a full one (taps
    static_w plus, per kv head, taps projected from the layer's input, weight_proj: hidden → kv heads · kernel). A
    full layer normalises its query, key and value inputs apart (q_, k_, v_input_norm), a sliding one once (attn_norm).
    Every layer is an MoE: a sigmoid router with an e_score_correction_bias buffer (saved as mlp.gate.bias) over
    n_routed_experts stacked experts of moe_intermediate_size (the config's intermediate_size), num_experts_per_tok a
    token, no shared expert; attn_sconv and mlp_sconv (hidden channels) run on the sublayers' outputs.

    Attention residuals: each layer's attention input (three queries in a full layer, for q, k and v; none in layer
    0) and MLP input, and the final norm's input, are learned queries attending over the outputs of the blocks of
    n_layers_per_attn_res_block layers so far and the running partial sum: at layer i ⌈i / block⌉ + 1 sources (one
    more for the MLP at a block's first layer), at the end ⌈layers / block⌉ + 1; their FLOPs count under other (the
    final one with the last layer). The queries are saved apart from the layers (model.llm.attn_res.: attn_queries.{i
    − 1}, mlp_queries.{i}, output_query). The embeddings are normalised (embed_norm); lm_head, never tied, has
    unpadded_vocab_size rows, saved padded with zero rows to vocab_size (Inkling2UnpadVocab). Saved as Thinking
    Machines' checkpoints name the tensors (conversion_mapping.py's "inkling2_text", reverted), under model.llm.."""

    layer_name = "model.llm.layers.{i}"
    attention_names = INKLING2_ATTENTION
    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = INKLING2_EXPERTS
    model_names = ModelNames(embed_tokens="model.llm.embed", final_norm="model.llm.norm", lm_head="model.llm.unembed")
    informational_fields = DecoderConfig.informational_fields | {"tie_word_embeddings"}

    hidden_act: Name
    unpadded_vocab_size: Width
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    swa_num_attention_heads: HeadCount
    swa_num_key_value_heads: HeadCount
    swa_head_dim: Width
    sliding_window_size: Width
    d_rel: Width
    rel_extent: Width
    layer_types: Annotated[list[Literal["hybrid", "hybrid_sliding"]], Field(max_length=MAX_LAYERS)] | None
    max_position_embeddings: Annotated[int, Field(strict=True)]
    conv_kernel_size: Width
    moe_intermediate_size: Width
    n_routed_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    n_layers_per_attn_res_block: Width

    _check_layer_types = entries_check("layer_types", exact=True)

    def warnings(self) -> list[str]:
        found = super().warnings()
        if self.unpadded_vocab_size > self.vocab_size:
            found.append(
                f"unpadded_vocab_size ({self.unpadded_vocab_size}) is more than vocab_size ({self.vocab_size}): "
                "transformers builds the head of unpadded_vocab_size rows but cannot save it padded to vocab_size"
            )
        return found

    @derives("layer_types", "hybrid_sliding except every sixth layer")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["hybrid" if (i + 1) % 6 == 0 else "hybrid_sliding" for i in range(self.num_hidden_layers)]

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window_size if kind == "hybrid_sliding" else None for kind in self.kinds()]

    def block_sources(self, index: int) -> int:
        """The block states before layer INDEX (a block's output joins them after its first layer): ⌈index / block⌉."""
        return -(-index // self.n_layers_per_attn_res_block)

    def sliding(self, index: int) -> bool:
        return self.kinds()[index] == "hybrid_sliding"

    def own_flops(self, index: int) -> int:
        """Layer INDEX's FLOPs no weight describes: its relative bias, 2 · heads · d_rel · reach, and its attention
        residuals: its attention input's queries (none in layer 0, three in a full layer) over the blocks so far and
        the partial sum, its MLP input's one over those and, at a block's first layer, that layer's input too."""
        sliding, hidden, blocks = self.sliding(index), self.hidden_size, self.block_sources(index)
        shape = head_shape(self, sliding)
        queries = 0 if index == 0 else 1 if sliding else 3
        first = index % self.n_layers_per_attn_res_block == 0
        return (
            2 * shape.heads * self.d_rel * shape.reach
            + block_attention_flops(queries, blocks + 1, hidden)
            + block_attention_flops(1, blocks + 1 + first, hidden)
        )

    def final_flops(self) -> int:
        """The final input's query over every block and the partial sum, counted with the last layer."""
        return block_attention_flops(1, self.block_sources(self.num_hidden_layers) + 1, self.hidden_size)

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden, kernel = self.hidden_size, self.conv_kernel_size
        sliding = self.sliding(index)
        shape = head_shape(self, sliding)
        heads, kv_heads, head_dim, reach = shape.heads, shape.kv_heads, shape.head_dim, shape.reach
        attention = self.attention(
            window, num_heads=heads, num_kv_heads=kv_heads, qk_head_dim=head_dim, v_head_dim=head_dim
        )
        kv = kv_heads * head_dim
        if sliding:
            convs = tuple(
                Parameter("attention", "sconv", f"attn.{x}_sconv.weight", (kv, 1, kernel), matmul=True) for x in "kv"
            )
            norms: tuple[tuple[str, Norm], ...] = (("attn_norm", self.rms_norm()), ("mlp_norm", self.rms_norm()))
        else:  # the taps, static_w plus weight_proj's per-head ones, are summed before the one convolution
            convs = tuple(
                Parameter("attention", "sconv", f"attn.{x}_sconv.{name}", shape, matmul=True)
                for x in "kv"
                for name, shape in (("static_w", (kernel, kv)), ("weight_proj", (kv_heads * kernel, hidden)))
            )
            norms = (*((f"{x}_input_norm", self.rms_norm()) for x in "qkv"), ("mlp_norm", self.rms_norm()))
        parameters = (
            *convs,
            Parameter("norm", "q_norm", "attn.q_l2_clip.scale", (heads, head_dim)),
            Parameter("norm", "relative_bias", "attn.rel_l2_clip.scale", (heads, self.d_rel)),
            Parameter("attention", "relative_bias", "attn.rel_logits_proj.proj", (self.d_rel, reach)),
            Parameter("other", "sconv", "attn_sconv.weight", (hidden, 1, kernel), matmul=True),
            Parameter("other", "sconv", "mlp_sconv.weight", (hidden, 1, kernel), matmul=True),
        )
        projections = (
            Projection("output_gate", "attn.gate_attn", hidden, heads * head_dim, component="attention"),
            Projection("sinks", "attn.attn_sink_proj", hidden, heads, component="attention"),
            Projection("r_proj", "attn.wr_du", hidden, heads * self.d_rel, component="attention"),
        )
        # The convolutions' windows: each keeps its last kernel − 1 inputs.
        windows = Mixer(kind="short_conv", projections=(), state_elements=(kernel - 1) * (2 * kv + 2 * hidden))
        moe = self.moe_ffn(self.n_routed_experts, self.num_experts_per_tok, self.moe_intermediate_size)
        last = index == self.num_hidden_layers - 1
        return self.layer(
            attention,
            moe,
            norms=norms,
            mixer=windows,
            projections=projections,
            parameters=parameters,
            other_flops=self.own_flops(index) + (self.final_flops() if last else 0),
        )

    def residual_queries(self) -> tuple[Extra, ...]:
        """The attention residuals' learned queries, saved apart from the layers (model.llm.attn_res.)."""
        hidden, kinds = self.hidden_size, self.kinds()
        prefix = "model.llm.attn_res."
        attention = tuple(
            Extra("other", f"{prefix}attn_queries.{i - 1}", LearnedTensor((hidden,) if sliding else (3, hidden)))
            for i, sliding in enumerate(kind == "hybrid_sliding" for kind in kinds)
            if i
        )
        mlp = tuple(Extra("other", f"{prefix}mlp_queries.{i}", LearnedTensor((hidden,))) for i in range(len(kinds)))
        return (*attention, *mlp, Extra("other", prefix + "output_query", LearnedTensor((hidden,))))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        every = tuple(range(self.num_hidden_layers))
        return (correction_bias_extra(self.layer_name, every, self.n_routed_experts, stored_as="bias"),)

    def to_spec(self) -> ModelSpec:
        embed_norm = Extra("norm", "model.llm.embed_norm", Norm("rmsnorm", self.hidden_size))
        return replace(
            super().to_spec(),
            tie_word_embeddings=False,
            lm_head_rows=self.unpadded_vocab_size,
            lm_head_stored_rows=self.vocab_size,
            extras=(embed_norm, *self.residual_queries()),
        )


# --- Inkling 2 Loop (inkling2_loop_text): Inkling 2 with a run of its layers looped, messages passed between loops --

#: A loop layer's four message gates (query, key, value and MLP inputs) as its checkpoints name them: controllers.
MESSAGE_GATES = ("attn", "k", "v", "mlp")


class LoopBlock(BaseModel):
    """loop_config: the original checkpoints' names for the loop fields (Inkling2LoopTextConfig.__post_init__)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    core_start: LayerIndex | None = None
    core_end: LayerIndex | None = None
    num_passes: LayerCount | None = None
    gate_rank: Width | None = None


@family(
    "inkling2_loop_text",
    transformers="Inkling2LoopTextConfig",
    model_class="Inkling2LoopForCausalLM",
    read_beyond={"loop_config": "the original checkpoints' block of the loop fields, which __post_init__ reads"},
)
class Inkling2LoopTextConfig(Inkling2TextConfig):
    """configuration_inkling2_loop.py / modular_inkling2_loop.py (Inkling2LoopForCausalLM): Inkling 2's text model
    whose layers loop_layer_index_start to loop_layer_index_end − 1 run loop_num_passes times (a loop_config block's
    core_start, core_end, num_passes and gate_rank win over them). Each pass after the first restarts from the states
    before the loop and gets four messages a layer, retrieved from the previous pass's block outputs by learned
    queries (message_input: loop layers × 4 × hidden, saved as middle_cycle_cross_pass_queries, the query and MLP
    ones, and middle_cycle_cross_pass_kv_queries, 2 · loop layers × hidden each), each mixed into one of its inputs
    by a message gate (saved as controllers.{attn,k,v,mlp}: down_weight 2 · hidden → loop_gate_rank, forget_weight and
    gain_weight rank → hidden). ffncalc lists the loop layers again for each further pass, borrowing their tensors:
    their own caches, and the gates' and the messages' FLOPs (under other), which the first pass does not run."""

    loop_layer_index_start: LayerIndex
    loop_layer_index_end: LayerIndex
    loop_num_passes: LayerCount
    loop_gate_rank: Width
    loop_config: LoopBlock | None = None

    @model_validator(mode="after")
    def _check_loop(self) -> Inkling2LoopTextConfig:
        start, end, block = self.loop_start, self.loop_end, self.n_layers_per_attn_res_block
        if start == 0:
            raise ValueError("loop_layer_index_start (0) must be greater than 0 (Inkling2LoopTextConfig)")
        for field, value in (("loop_layer_index_start", start), ("loop_layer_index_end", end)):
            if value % block:
                raise ValueError(f"{field} ({value}) must be a multiple of n_layers_per_attn_res_block ({block})")
        if end < start:
            raise ValueError(f"loop_layer_index_end ({end}) is before loop_layer_index_start ({start})")
        return self

    @property
    def loop_start(self) -> int:
        found = self.loop_config.core_start if self.loop_config else None
        return self.loop_layer_index_start if found is None else found

    @property
    def loop_end(self) -> int:
        found = self.loop_config.core_end if self.loop_config else None
        return self.loop_layer_index_end if found is None else found

    @property
    def passes(self) -> int:
        found = self.loop_config.num_passes if self.loop_config else None
        return self.loop_num_passes if found is None else found

    @property
    def gate_rank(self) -> int:
        found = self.loop_config.gate_rank if self.loop_config else None
        return self.loop_gate_rank if found is None else found

    def loop_layers(self) -> range:
        """The looped layers transformers builds: those of start … end − 1 the model has."""
        return range(self.loop_start, min(self.loop_end, self.num_hidden_layers))

    def message_gates(self, matmul: bool) -> tuple[Parameter, ...]:
        """A loop layer's four message gates; MATMUL where they run (the passes after the first)."""
        hidden, rank = self.hidden_size, self.gate_rank
        shapes = (
            ("down_weight", (rank, 2 * hidden)),
            ("forget_weight", (hidden, rank)),
            ("gain_weight", (hidden, rank)),
        )
        return tuple(
            Parameter("other", "message_gate", f"controllers.{gate}.{name}", shape, matmul=matmul)
            for gate in MESSAGE_GATES
            for name, shape in shapes
        )

    def message_flops(self) -> int:
        """A loop layer's four message queries over the previous pass's block outputs after the loop's first and its
        last output: ⌈min(end, layers) / block⌉ − start / block sources."""
        block = self.n_layers_per_attn_res_block
        sources = -(-min(self.loop_end, self.num_hidden_layers) // block) - self.loop_start // block
        return block_attention_flops(4, sources, self.hidden_size)

    def build_layer(self, index: int, window: int | None) -> Layer:
        layer = super().build_layer(index, window)
        if index not in self.loop_layers():
            return layer
        return replace(layer, parameters=layer.parameters + self.message_gates(matmul=False))

    def build_layers(self) -> tuple[Layer, ...]:
        """Every layer once, then the loop layers again for each further pass, borrowing every tensor, with their
        message gates running and their messages retrieved."""
        held = super().build_layers()
        running = self.message_gates(matmul=True)
        again = tuple(
            replace(
                held[index],
                parameters=held[index].parameters[: -len(running)] + running,
                other_flops=self.own_flops(index) + self.message_flops(),
                borrowed=("",),
            )
            for index in self.loop_layers()
        )
        return held + again * (self.passes - 1)

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        rows = 2 * (self.loop_end - self.loop_start)
        queries = tuple(
            Extra("other", f"model.llm.middle_cycle_cross_pass_{kind}", LearnedTensor((rows, self.hidden_size)))
            for kind in ("queries", "kv_queries")
        )
        return replace(spec, extras=spec.extras + queries)


# --- Inkling 2 (inkling2, inkling2_loop): the text model with a layer-scaled ViT ------------------------------------


@tower("inkling2_vision", transformers="Inkling2VisionConfig")
class Inkling2VisionConfig(TowerConfig):
    """configuration_inkling2.py (Inkling2VisionConfig) / Inkling2VisionModel, saved as the original checkpoints name
    it (conversion_mapping.py's "inkling2", reverted; Step 3.7's tower's layer names): patch_embedding, a linear
    without bias over each patch's num_channels · patch_size² values; position_embedding (posemb_grid_size² rows,
    interpolated), class_embedding and cls_position_embedding (a class token before each image's patches); ln_pre;
    layers of LayerNorms (ln_1, ln_2), biased q, k, v, out_proj, layer scales (ls_1.gamma, ls_2.gamma) and a biased
    c_fc/c_proj MLP of intermediate_size (default int(hidden_size · mlp_ratio)); then the merger, proj_in
    (spatial_merge_size² · hidden → projection_hidden_dim) and proj_out (→ text_hidden_size), biased by
    projector_bias, once per merged token. An image is padded to whole merged patches, as Inkling2ImageProcessor
    does, never scaled (ImageInput "pad"); each image's class token is carried by the layers too."""

    hidden_size: Width
    intermediate_size: Width | None
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    patch_size: Width
    hidden_act: Name
    mlp_ratio: Annotated[float, Field(gt=0, le=1024)]
    spatial_merge_size: Width
    posemb_grid_size: Width
    projection_hidden_dim: Width
    projector_bias: Flag
    text_hidden_size: Width

    @model_validator(mode="after")
    def _check_heads(self) -> Inkling2VisionConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}): Inkling2VisionAttention refuses it"
            )
        return self

    @property
    @derives("intermediate_size", "int(hidden_size · mlp_ratio)")
    def mlp_width(self) -> int:
        return self.intermediate_size or int(self.hidden_size * self.mlp_ratio)

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        layer_norm = Norm("layernorm", hidden, bias=True)
        scales = tuple(Parameter("vision", name, name, (hidden,)) for name in ("ls_1.gamma", "ls_2.gamma"))
        attention = Attention(
            hidden, heads, heads, hidden // heads, hidden // heads, CLIP_ATTENTION, True, True, True, True
        )
        layer = Layer(
            prefix + "backbone.layers.{i}",
            attention,
            DenseFfn(hidden, self.mlp_width, False, self.hidden_act, VISION_MLP, bias=True),
            (("ln_1", layer_norm), ("ln_2", layer_norm)),
            stack="vision",
            parameters=scales,
        )
        embeddings = prefix + "backbone.embeddings."
        merged, bias = self.spatial_merge_size**2 * hidden, self.projector_bias
        extras = (
            tower_module(embeddings + "patch_embedding", Linear(self.num_channels * self.patch_size**2, hidden)),
            tower_module(embeddings + "position_embedding", LearnedTensor((self.posemb_grid_size**2, hidden))),
            tower_module(embeddings + "class_embedding", LearnedTensor((hidden,))),
            tower_module(embeddings + "cls_position_embedding", LearnedTensor((hidden,))),
            tower_module(prefix + "backbone.ln_pre", layer_norm),
            tower_module(prefix + "proj_in", Linear(merged, self.projection_hidden_dim, bias), runs="per_image_token"),
            tower_module(
                prefix + "proj_out",
                Linear(self.projection_hidden_dim, self.text_hidden_size, bias),
                runs="per_image_token",
            ),
        )
        # Inkling2ImageProcessor pads each image to whole merged units (size, 40 px: patch_size · spatial_merge_size,
        # as Inkling2VisionEmbeddings cuts them) and never scales it; each image's class token runs the layers too.
        unit = self.patch_size * self.spatial_merge_size
        image = ImageInput(self.patch_size, "pad", unit, merge=self.spatial_merge_size, extra_tokens=1)
        return Tower((layer,) * self.num_hidden_layers, extras, self.text_hidden_size, image)


@family(
    "inkling2", transformers="Inkling2Config", architecture="Inkling 2", model_class="Inkling2ForConditionalGeneration"
)
class Inkling2Config(MultimodalLayers):
    """configuration_inkling2.py (Inkling2Config) / modeling_inkling2.py (Inkling2ForConditionalGeneration): the text
    model (inkling2_text) and the vision tower (inkling2_vision, whose merger projects into the text width; the
    configuration refuses a text_hidden_size other than the text model's hidden_size); lm_head never tied, saved
    padded as the text model's. Saved as Thinking Machines' checkpoints name them (conversion_mapping.py's
    "inkling2", reverted): model.llm. as the text model's, model.visual.."""

    text_model_type = "inkling2_text"
    vision_model_type = "inkling2_vision"
    language_model_prefix = "model."
    lm_head_name = "model.llm.unembed"
    vision_prefix = "model.visual."
    informational_fields = frozenset({"image_token_id"})

    vision_config: dict[str, Any] | None

    def validate_nested(self) -> None:
        super().validate_nested()
        vision, text = self.vision, self.text
        if not isinstance(vision, Inkling2VisionConfig) or not isinstance(text, Inkling2TextConfig):
            return
        if vision.text_hidden_size != text.hidden_size:
            raise InvalidConfigError(
                f"vision_config.text_hidden_size ({vision.text_hidden_size}) must match text_config.hidden_size "
                f"({text.hidden_size}) (Inkling2Config.validate_architecture); set both to the same width"
            )


@family("inkling2_loop", transformers="Inkling2LoopConfig", model_class="Inkling2LoopForConditionalGeneration")
class Inkling2LoopConfig(Inkling2Config):
    """configuration_inkling2_loop.py (Inkling2LoopConfig) / Inkling2LoopForConditionalGeneration: Inkling 2 with the
    looped text model (inkling2_loop_text); its default tower projects into 2,304, the default text width."""

    text_model_type = "inkling2_loop_text"
    vision_defaults: ClassVar[dict[str, Any]] = {"text_hidden_size": 2304}


# --- Inkling (inkling_mm_model): the text model with a hierarchical-MLP image encoder and a dMel audio embedding ------

#: conversion_mapping.py's "inkling_mm_model" renamings of a layer's modules (transformers 5.24), reverted: the names
#: Thinking Machines' checkpoints keep, as (pattern over ".module.", its saved spelling).
SAVED_LAYER_MODULES = (
    (r"\.self_attn\.q_proj\.", ".attn.wq_du."),
    (r"\.self_attn\.k_proj\.", ".attn.wk_dv."),
    (r"\.self_attn\.v_proj\.", ".attn.wv_dv."),
    (r"\.self_attn\.r_proj\.", ".attn.wr_du."),
    (r"\.self_attn\.o_proj\.", ".attn.wo_ud."),
    (r"\.self_attn\.(q_norm|k_norm|rel_logits_proj)\.", r".attn.\1."),
    (r"\.self_attn\.(k_sconv|v_sconv)\.conv1d\.", r".attn.\1."),
    (r"\.(attn_sconv|mlp_sconv)\.conv1d\.", r".\1."),
    (r"\.input_layernorm\.", ".attn_norm."),
    (r"\.post_attention_layernorm\.", ".mlp_norm."),
    (r"\.mlp\.(gate_proj|up_proj)\.", ".mlp.w13_dn."),  # the dense SwiGLU's gate and up, saved interleaved in one
    (r"\.mlp\.down_proj\.", ".mlp.w2_md."),
    (r"\.mlp\.shared_experts\.(gate_proj|up_proj)\.", ".mlp.shared_experts.shared_w13_weight."),
    (r"\.mlp\.shared_experts\.down_proj\.", ".mlp.shared_experts.shared_w2_weight."),
    (r"\.mlp\.gate\.e_score_correction_bias\.", ".mlp.gate.bias."),
)
SAVED_EXPERT_MODULES = ((r"\.gate_up_proj\.", ".w13_weight."), (r"\.down_proj\.", ".w2_weight."))


def saved_inkling_layer(layer: Layer) -> Layer:
    """LAYER with every module and tensor as Thinking Machines' checkpoints name it (SAVED_LAYER_MODULES)."""
    rename = partial(saved_module, renamings=SAVED_LAYER_MODULES)

    def saved_ffn(ffn: DenseFfn | MoeFfn | None) -> DenseFfn | MoeFfn | None:
        if isinstance(ffn, MoeFfn):
            shared = ffn.shared
            return replace(
                ffn,
                expert=replace(ffn.expert, names=renamed(ffn.expert.names, SAVED_EXPERT_MODULES)),
                shared=None if shared is None else replace(shared, names=renamed(shared.names, SAVED_LAYER_MODULES)),
            )
        return ffn if ffn is None else replace(ffn, names=renamed(ffn.names, SAVED_LAYER_MODULES))

    saved = saved_layer(layer, SAVED_LAYER_MODULES)
    return replace(
        saved,
        ffn=saved_ffn(layer.ffn),
        parameters=tuple(replace(p, name=rename(p.name)) for p in layer.parameters),
        projections=tuple(replace(p, module=rename(p.module)) for p in layer.projections),
    )


def renamed(block_names: Names, renamings: Renamings) -> Names:
    """BLOCK_NAMES with each module as RENAMINGS spell it."""
    modules = tuple((part, saved_module(module, renamings)) for part, module in block_names.modules)
    return replace(block_names, modules=modules)


def prime_factors(number: int) -> list[int]:
    """modeling_inkling.py's prime_factors: NUMBER's prime factors, smallest first."""
    factors, odd = [], 3
    while number % 2 == 0:
        factors.append(2)
        number //= 2
    while odd * odd <= number:
        while number % odd == 0:
            factors.append(odd)
            number //= odd
        odd += 2
    return factors + ([number] if number > 1 else [])


@tower("inkling_vision", transformers="InklingVisionConfig")
class InklingVisionConfig(TowerConfig):
    """configuration_inkling.py (InklingVisionConfig) / InklingVisionModel, a hierarchical MLP over each patch of
    temporal_patch_size frames of patch_size² pixels: plan_out_scales lays out num_hidden_layers + 1 scales (time,
    height, width, channels) from the patch's prime factors (channels rounded up to multiples of 64) and gives each
    layer the scale nearest, in log size, to an even climb to the whole patch; each layer folds the grid from one
    scale to the next (its cells side by side) and projects, without bias, into the next scale's channels (the last
    into the text width), with an RMSNorm after each but the last; a final RMSNorm. ffncalc follows plan_out_scales'
    nearest-scale rule (it needs num_hidden_layers at least the number of scales: fewer make transformers call scipy's
    linear_sum_assignment) and refuses a plan whose choice is a tie that float rounding decides. Counted by
    parameter: no image rule. hidden_size and num_attention_heads build nothing."""

    informational_fields = frozenset({"hidden_size", "num_attention_heads"})

    text_hidden_size: Width
    patch_size: Width
    temporal_patch_size: Width
    num_channels: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount

    @model_validator(mode="after")
    def _check_plan(self) -> InklingVisionConfig:
        self.scales()
        return self

    def scales(self) -> list[tuple[int, int, int, int]]:
        """plan_out_scales: the (time, height, width, channels) of the input and of each layer's output."""
        channels, layers = self.num_channels, self.num_hidden_layers
        sides = list(accumulate(prime_factors(self.patch_size)[::-1], lambda a, b: a * b))
        times = list(accumulate(prime_factors(self.temporal_patch_size)[::-1], lambda a, b: a * b))
        last = sides[-1]
        candidates = (
            [(1, 1, 1, channels)]
            + [(1, side, side, -(-(side * side * channels) // 64) * 64) for side in sides]
            + [(time, last, last, last * last * channels * time * 64) for time in times]
        )
        if layers < len(candidates):
            raise ValueError(
                f"num_hidden_layers ({layers}) is below the {len(candidates)} scales plan_out_scales lays out: "
                "transformers then assigns them with scipy's linear_sum_assignment, which ffncalc does not reproduce"
            )
        logs = [math.log(t * h * w) for t, h, w, _ in candidates]
        total = math.log(self.patch_size**2 * self.temporal_patch_size * channels)
        chosen = []
        for step in range(layers + 1):
            ideal = total * step / layers
            costs = sorted((abs(ideal - size), index) for index, size in enumerate(logs))
            if costs[1][0] - costs[0][0] < 1e-6 * max(1.0, total):
                raise ValueError(
                    f"plan_out_scales' layer {step} lies midway between two scales: transformers' float32 rounding "
                    "picks one, which ffncalc cannot state exactly; choose another num_hidden_layers"
                )
            chosen.append(costs[0][1])
        chosen[0], chosen[-1] = 0, len(candidates) - 1
        return [candidates[index] for index in chosen]

    def tower(self, prefix: str) -> Tower:
        scales = self.scales()
        extras = []
        for index, (start, end) in enumerate(pairwise(scales)):
            folded = (end[0] // start[0]) * (end[1] // start[1]) * (end[2] // start[2])
            last = index == self.num_hidden_layers - 1
            out = self.text_hidden_size if last else end[3]
            extras.append(tower_module(f"{prefix}layers.linear_{index}", Linear(start[3] * folded, out)))
            if not last:
                extras.append(tower_module(f"{prefix}layers.norm_{index}", Norm("rmsnorm", out)))
        extras.append(tower_module(prefix + "final_norm", Norm("rmsnorm", self.text_hidden_size)))
        return Tower((), tuple(extras), self.text_hidden_size, None)


@tower("inkling_audio", transformers="InklingAudioConfig")
class InklingAudioConfig(TowerConfig):
    """configuration_inkling.py (InklingAudioConfig) / InklingAudioModel: each frame's n_mel_bins mel values,
    quantized into mel_vocab_size bins, looked up in one table of n_mel_bins · mel_vocab_size rows (saved as
    encoder), summed, and an RMSNorm (saved as final_norm): no matmul."""

    n_mel_bins: Width
    mel_vocab_size: Width
    text_hidden_size: Width

    def tower(self, prefix: str) -> Tower:
        table = Table(self.n_mel_bins * self.mel_vocab_size, self.text_hidden_size)
        extras = (
            audio_module(prefix + "encoder", table),
            audio_module(prefix + "final_norm", Norm("rmsnorm", self.text_hidden_size)),
        )
        return Tower((), extras, self.text_hidden_size, None)


@family(
    "inkling_mm_model",
    transformers="InklingConfig",
    architecture="Inkling",
    model_class="InklingForConditionalGeneration",
)
class InklingConfig(MultimodalLayers):
    """configuration_inkling.py (InklingConfig) / modeling_inkling.py (InklingForConditionalGeneration): the text
    model, the image encoder and the audio embedding, both projecting into the text width (InklingConfig.__post_init__
    sets their text_hidden_size to it); lm_head never tied. Saved as Thinking Machines' checkpoints name them
    (conversion_mapping.py's "inkling_mm_model", reverted): model.llm. (embed, embed_norm, norm, unembed as the head,
    the layers' modules by SAVED_LAYER_MODULES), model.visual. and model.audio.."""

    text_model_type = "inkling_text"
    vision_model_type = "inkling_vision"
    audio_model_type = "inkling_audio"
    language_model_prefix = "model.llm."
    lm_head_name = "model.llm.unembed"
    language_model_renames = (
        ("model.llm.embed_tokens.embed_norm", "model.llm.embed_norm"),
        ("model.llm.embed_tokens", "model.llm.embed"),
    )
    vision_prefix = "model.visual."
    audio_prefix = "model.audio."
    informational_fields = frozenset({"mtp_config"})

    vision_config: dict[str, Any] | None
    audio_config: dict[str, Any] | None

    @cached_property
    def towers(self) -> dict[str, TowerConfig]:
        """The towers, their text_hidden_size the language model's hidden_size (InklingConfig.__post_init__)."""
        hidden = self.text.hidden_size  # type: ignore[attr-defined]
        return {field: tower.model_copy(update={"text_hidden_size": hidden}) for field, tower in super().towers.items()}

    def wrapped_spec(self) -> ModelSpec:
        spec = super().wrapped_spec()
        saved: dict[Layer, Layer] = {}
        layers = tuple(saved.setdefault(layer, saved_inkling_layer(layer)) for layer in spec.layers)
        rename = partial(saved_module, renamings=SAVED_LAYER_MODULES)
        extras = tuple(
            replace(extra, tensors=tuple(replace(t, name=rename(t.name)) for t in extra.tensors))
            for extra in spec.checkpoint_extras
        )
        return replace(spec, layers=layers, checkpoint_extras=extras)
