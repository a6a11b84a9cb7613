"""Tencent's Hy4 (hy_v4): DeepSeek-V3.2's latent attention and lightning indexer (shared across layers as GLM-5's),
an output gate and a sink per head, GLM-4.7-Flash's dense-then-MoE layers, and hyper-connections without DeepSeek-V4's
stream mixing."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import (
    MAX_LAYERS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
    per_config,
)
from ..spec import (
    Attention,
    CheckpointExtra,
    Extra,
    Indexer,
    Layer,
    LearnedTensor,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Names,
    Norm,
    Parameter,
    Projection,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .blocks import MLA_ATTENTION, MlpLayerTypes, entries_check
from .deepseek import INDEXER, correction_bias_extra, even_rope_check, mla_attention
from .registry import family

# The names transformers 5.24 saves (conversion_mapping.py, "hy_v4", reverted): the checkpoint's own for the gate, the
# sinks and the hyper-connections; the stacked experts as the model holds them.
HY_V4_ATTENTION = Names((*MLA_ATTENTION.modules, ("sinks", "self_attn.learnable_sink_param")))
HY_V4_EXPERT = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)
# ALLOWED_ATTN_LAYER_TYPES (configuration_utils.py): validate_layer_type refuses any other entry.
AttentionLayerType = Literal[
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "window_attention",
    "indexed_attention",
    "compressed_sparse_attention",
    "heavily_compressed_attention",
    "minimax_m3_sparse",
    "conv",
    "moe",
    "hybrid",
    "hybrid_sliding",
    "reference_sliding_attention",
    "linear_attention",
]


@family(
    "hy_v4",
    transformers="HYV4Config",
    architecture="Hy4",
    model_class="HYV4ForCausalLM",
    heads_divide_hidden=False,  # nothing checks hidden_size against the heads
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class HyV4Config(MlpLayerTypes, DecoderConfig):
    """configuration_hy_v4.py / modular_hy_v4.py (Hy4): every layer's attention is MLA (q_a → q_lora_rank, an RMSNorm,
    q_b; kv_a_proj_with_mqa → kv_lora_rank + qk_rope_head_dim, an RMSNorm, kv_b; attention_bias on q_a, kv_a and o)
    reading the index_topk keys an indexer picks: its own (indexer_types "full": wq_b from the query latent, wk and
    its LayerNorm, weights_proj) or the previous full layer's ("shared"; default: full at layer 0 and where
    (i − 1) % 4 == 0). The output is gated per element (linear_gate: hidden → heads · v_head_dim, no bias) and each
    head has a sink logit. mlp_layer_types (default: one dense layer, then sparse) picks a gated MLP of
    intermediate_size or a MoE: n_routed_experts stacked experts of moe_intermediate_size (gate and up fused), a
    router (mlp.gate, float32) with its e_score_correction_bias buffer, and shared experts of n_shared_experts ×
    moe_intermediate_size.

    The hidden state travels as hc_mult streams: before attention and before the MLP a hyper-connection (fn:
    hc_mult · hidden → 2 · hc_mult, base, scale [2]) weighs them into one input and spreads the output back; the
    model's hc_head (fn: hc_mult · hidden → hc_mult) collapses them before the final norm. Unlike DeepSeek-V4's, it
    does not mix the streams with each other (no comb), so its only matmul is fn. num_key_value_heads and head_dim
    are overwritten by __post_init__ (every head has its keys; head_dim is qk_rope_head_dim): not read.
    """

    informational_fields = DecoderConfig.informational_fields | {"layer_types"}
    attention_names = HY_V4_ATTENTION
    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = HY_V4_EXPERT
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.norm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    moe_intermediate_size: Width
    max_position_embeddings: PositionCount
    n_routed_experts: ExpertCount
    n_shared_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    q_lora_rank: Width
    kv_lora_rank: Width
    qk_nope_head_dim: Width
    qk_rope_head_dim: Width
    v_head_dim: Width
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None
    layer_types: Annotated[list[AttentionLayerType], Field(max_length=MAX_LAYERS)] | None
    index_topk: Width
    index_head_dim: Width
    index_n_heads: HeadCount
    indexer_types: Annotated[list[Literal["full", "shared"]], Field(max_length=MAX_LAYERS)] | None
    hc_mult: HeadCount

    # validate_layer_type: layer_types and mlp_layer_types have one entry per layer; indexer_types is indexed per layer
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)
    _check_layer_types = entries_check("layer_types", exact=True)
    _check_indexer_types = entries_check("indexer_types", exact=False)
    _check_rope = even_rope_check()

    @derives("mlp_layer_types", "the first layer dense, the others sparse")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense"] + ["sparse"] * (self.num_hidden_layers - 1)

    @derives("layer_types", "indexed_attention on every layer")
    def kinds(self) -> list[str]:
        return list(self.layer_types or ["indexed_attention"] * self.num_hidden_layers)

    @derives("indexer_types", "full at layer 0 and where (i − 1) % 4 == 0, else shared")
    @per_config
    def indexer_kinds(self) -> list[str]:
        if self.indexer_types is not None:
            return list(self.indexer_types[: self.num_hidden_layers])
        return ["full" if i == 0 or (i - 1) % 4 == 0 else "shared" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        unused = self.unused_ffn_fields(
            {"n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size"}
        )
        if "full" not in self.indexer_kinds():
            unused |= {"index_n_heads", "index_head_dim"}
        return unused

    def hy_attention(self, shared_indexer: bool) -> Attention:
        indexer = Indexer(
            heads=self.index_n_heads,
            head_dim=self.index_head_dim,
            q_input=self.q_lora_rank,
            top_k=self.index_topk,
            names=INDEXER,
            k_norm=Norm("layernorm", self.index_head_dim, bias=True),
            shared=shared_indexer,
        )
        return mla_attention(self, None, indexer=indexer, sinks=True)

    def moe(self) -> MoeFfn:
        return self.shared_experts_moe(
            self.n_routed_experts, self.num_experts_per_tok, self.moe_intermediate_size, self.n_shared_experts
        )

    def hyper_connections(self) -> tuple[Parameter, ...]:
        """Before attention and before the MLP: fn [2 · hc, hc · hidden], base [2 · hc], scale [2]."""
        hc = self.hc_mult
        return tuple(
            parameter
            for block in ("attn", "mlp")
            for parameter in (
                Parameter(
                    "other",
                    "hyper_connections",
                    f"hc_pre.hc_{block}_layer.hc_fn",
                    (2 * hc, hc * self.hidden_size),
                    matmul=True,
                ),
                Parameter("other", "hyper_connections", f"hc_pre.hc_{block}_layer.hc_base", (2 * hc,)),
                Parameter("other", "hyper_connections", f"hc_pre.hc_{block}_layer.hc_scale", (2,)),
            )
        )

    def build_layers(self) -> tuple[Layer, ...]:
        # The output gate multiplies the attention's output element by element: hidden → heads · v_head_dim.
        gate = Projection(
            "gate_proj",
            "self_attn.linear_gate",
            self.hidden_size,
            self.num_attention_heads * self.v_head_dim,
            component="attention",
        )
        built: dict[tuple[bool, bool], Layer] = {}
        layers = []
        for sparse, indexer in zip(self.mlp_kinds(), self.indexer_kinds(), strict=False):
            key = (sparse == "sparse", indexer == "shared")
            if key not in built:
                ffn = self.moe() if key[0] else self.gated_ffn()
                built[key] = self.layer(
                    self.hy_attention(key[1]), ffn, projections=(gate,), parameters=self.hyper_connections()
                )
            layers.append(built[key])
        return tuple(layers)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        return (correction_bias_extra(self.layer_name, sparse, self.n_routed_experts),) if sparse else ()

    def to_spec(self) -> ModelSpec:
        hc, hidden = self.hc_mult, self.hidden_size
        head = (  # collapses the hc streams before the final norm: hc_fn [hc, hc · hidden], hc_base [hc], hc_scale [1]
            Extra("other", "model.hc_pre.hc_head.hc_head_fn", LearnedTensor((hc, hc * hidden), matmul=True)),
            Extra("other", "model.hc_pre.hc_head.hc_head_base", LearnedTensor((hc,))),
            Extra("other", "model.hc_pre.hc_head.hc_head_scale", LearnedTensor((1,))),
        )
        return replace(super().to_spec(), extras=head)
