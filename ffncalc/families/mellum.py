"""JetBrains' Mellum: Qwen3-MoE's attention and experts, sliding and full layers, dense and sparse layers by list."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field

from ..schema import MAX_LAYERS, ExpertCount, HeadCount, LayerCount, PositionCount, Width, derives
from ..spec import Layer
from .base import AttentionBias, DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, TiedEmbeddings
from .blocks import MlpLayerTypes, entries_check, windows_of_layer_types
from .registry import family


@family("mellum")
class MellumConfig(HiddenAct, AttentionBias, MlpLayerTypes, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_mellum.py / modular_mellum.py: Qwen3-MoE's attention (attention_bias on q, k, v, o; an RMSNorm
    on each query and key head); layers in layer_types' sliding_attention attend within sliding_window (default:
    every layer full); mlp_layer_types (default: every layer sparse) picks a gated MLP of intermediate_size or
    num_experts routed experts of moe_intermediate_size (router mlp.gate, no bias; no shared expert).

    Checkpoints with num_mtp_layers may store a multi-token-prediction layer under mtp.*, which transformers does
    not build and skips when it loads (MellumPreTrainedModel._keys_to_ignore_on_load_unexpected); its layout is not
    given, and ffncalc does not count it.
    """

    architecture = "Mellum"
    config_class = "MellumConfig"
    default_model_class = "MellumForCausalLM"
    heads_divide_hidden = False  # MellumConfig does not check hidden_size; the attention reads head_dim

    vocab_size: Width = 98304
    hidden_size: Width = 2304
    intermediate_size: Width = 7168
    num_hidden_layers: LayerCount = 28
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount = 4
    head_dim: Width = 128
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = 1024
    moe_intermediate_size: Width = 896
    num_experts_per_tok: ExpertCount = 8
    num_experts: ExpertCount = Field(64, validation_alias=AliasChoices("num_experts", "num_local_experts"))
    layer_types: (
        Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    ) = None
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None = None
    routing_fields = ("num_experts_per_tok", "num_experts")
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)  # validate_layer_type: one per layer

    @derives("layer_types", "full_attention on every layer")
    def kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else ["full_attention"] * self.num_hidden_layers

    @derives("mlp_layer_types", "sparse on every layer")
    def default_mlp_kinds(self) -> list[str]:
        return ["sparse"] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        unused = set() if "sliding_attention" in self.kinds() else {"sliding_window"}
        return unused | self.unused_ffn_fields({"num_experts", "num_experts_per_tok", "moe_intermediate_size"})

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, **self.per_head_norms())
        if self.mlp_kinds()[index] == "dense":
            return self.layer(attention, self.gated_ffn())
        return self.layer(
            attention, self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
        )
