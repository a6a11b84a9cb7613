"""JetBrains' Mellum: Qwen3-MoE's attention and experts, sliding and full layers, dense and sparse layers by list."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import MAX_LAYERS, ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Layer
from .base import DecoderConfig
from .blocks import MlpLayerTypes, entries_check, windows_of_layer_types
from .registry import family


@family(
    "mellum",
    transformers="MellumConfig",
    architecture="Mellum",
    model_class="MellumForCausalLM",
    heads_divide_hidden=False,  # MellumConfig does not check hidden_size; the attention reads head_dim
    routing=("num_experts_per_tok", "num_experts"),
)
class MellumConfig(MlpLayerTypes, DecoderConfig):
    """configuration_mellum.py / modular_mellum.py: Qwen3-MoE's attention (attention_bias on q, k, v, o; an RMSNorm
    on each query and key head); layers in layer_types' sliding_attention attend within sliding_window (default:
    every layer full); mlp_layer_types (default: every layer sparse) picks a gated MLP of intermediate_size or
    num_experts routed experts of moe_intermediate_size (router mlp.gate, no bias; no shared expert).

    Checkpoints with num_mtp_layers may store a multi-token-prediction layer under mtp.*, which transformers does
    not build and skips when it loads (MellumPreTrainedModel._keys_to_ignore_on_load_unexpected); its layout is not
    given, and ffncalc does not count it.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None
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
