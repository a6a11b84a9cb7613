"""Poolside's Laguna: AFMoE's gated attention with a head count per layer, Qwen-MoE experts beside a shared
expert, a router whose correction bias is a parameter."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import (
    MAX_HEADS,
    MAX_LAYERS,
    ExpertCount,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
)
from ..spec import Layer, MoeFfn, Parameter, Projection, names
from .base import DecoderConfig
from .blocks import MlpLayerTypes, entries_check, windows_of_layer_types
from .registry import family

LAGUNA_SHARED = names(
    gate="mlp.shared_expert.gate_proj", up="mlp.shared_expert.up_proj", down="mlp.shared_expert.down_proj"
)
MlpKind = Literal["dense", "sparse"]


@family(
    "laguna",
    transformers="LagunaConfig",
    architecture="Laguna",
    model_class="LagunaForCausalLM",
    heads_divide_hidden=False,  # LagunaConfig does not check hidden_size; the attention reads head_dim
    routing=("num_experts_per_tok", "num_experts"),
)
class LagunaConfig(MlpLayerTypes, DecoderConfig):
    """configuration_laguna.py / modular_laguna.py: each layer's query heads from num_attention_heads_per_layer
    (default num_attention_heads), key and value heads num_key_value_heads, all head_dim wide; attention_bias on q,
    k, v, o; an RMSNorm on each query and key head; an output gate g_proj (no bias) of one unit per head (gating
    true or "per-head") or per element (heads · head_dim). Layers in layer_types' sliding_attention attend within
    sliding_window. mlp_layer_types (default: dense, then sparse) picks a gated MLP of intermediate_size or a MoE:
    num_experts experts of moe_intermediate_size (router mlp.gate, no bias, with e_score_correction_bias
    [num_experts], a parameter that is not trained) and a shared expert of shared_expert_intermediate_size (no gate).

    transformers keeps the experts stacked and saves them under the checkpoint's names (conversion_mapping.py,
    "laguna"): mlp.experts.{e}.*, mlp.experts.e_score_correction_bias, mlp.shared_expert.
    """

    moe_names = names(router="mlp.gate", experts="mlp.experts.{e}")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width
    moe_intermediate_size: Width
    shared_expert_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    gating: Flag | Literal["per-head", "per-element"]
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    mlp_layer_types: Annotated[list[MlpKind], Field(max_length=MAX_LAYERS)] | None
    num_attention_heads_per_layer: (
        Annotated[list[Annotated[int, Field(strict=True, ge=1, le=MAX_HEADS)]], Field(max_length=MAX_LAYERS)] | None
    )
    moe_apply_router_weight_on_input: Annotated[bool, Field(strict=True)]

    # validate_layer_type and LagunaConfig.validate_architecture: one entry per layer
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)
    _check_heads_per_layer = entries_check("num_attention_heads_per_layer", exact=True)

    @model_validator(mode="after")
    def _check_router_weight(self) -> LagunaConfig:
        if self.moe_apply_router_weight_on_input:
            raise ValueError("moe_apply_router_weight_on_input: transformers' Laguna does not support true yet")
        return self

    @derives("layer_types", "full_attention on every layer")
    def kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else ["full_attention"] * self.num_hidden_layers

    @derives("mlp_layer_types", "dense for the first layer, sparse for the others")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense"] + ["sparse"] * (self.num_hidden_layers - 1)

    @derives("num_attention_heads_per_layer", "num_attention_heads on every layer")
    def heads_per_layer(self) -> list[int]:
        if self.num_attention_heads_per_layer is not None:
            return list(self.num_attention_heads_per_layer)
        return [self.num_attention_heads] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        unused = set() if "sliding_attention" in self.kinds() else {"sliding_window"}
        sparse = {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size"}
        return unused | self.unused_ffn_fields(sparse)

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        heads = self.heads_per_layer()[index]
        head_dim = self.resolved_head_dim
        per_head = self.gating is True or self.gating == "per-head"
        gate = Projection(
            "g_proj",
            "self_attn.g_proj",
            self.hidden_size,
            heads if per_head else heads * head_dim,
            component="attention",
        )
        attention = self.attention(window, num_heads=heads, **self.per_head_norms())
        if not self.sparse(index):
            return self.layer(attention, self.gated_ffn(), projections=(gate,))
        bias = Parameter("ffn", "e_score_correction_bias", "mlp.experts.e_score_correction_bias", (self.num_experts,))
        return self.layer(attention, self.moe(), projections=(gate,), parameters=(bias,))

    def moe(self) -> MoeFfn:
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=self.shared_expert_intermediate_size,
            shared_names=LAGUNA_SHARED,
        )
