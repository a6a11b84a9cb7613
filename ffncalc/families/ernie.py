"""Baidu's ERNIE 4.5: the dense model and the MoE (text) model."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width
from ..spec import Layer, Parameter, names
from ..values import replace
from .base import DecoderConfig
from .blocks import is_sparse
from .registry import family

ERNIE_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)


@family(
    "ernie4_5",
    transformers="Ernie4_5Config",
    architecture="ERNIE-4.5",
    model_class="Ernie4_5ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class Ernie45Config(DecoderConfig):
    """configuration_ernie4_5.py / modular_ernie4_5.py: Llama's layer with one bias switch, use_bias, for q, k,
    v, o and the MLP (the head has none); head_dim 128 unless the config says null (then hidden_size // heads)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    use_bias: Flag

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.use_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=bias)
        return self.layer(attention, self.gated_ffn(bias=bias))


@family(
    "ernie4_5_moe",
    transformers="Ernie4_5_MoeConfig",
    architecture="ERNIE-4.5-MoE",
    model_class="Ernie4_5_MoeForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("moe_k", "moe_num_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Ernie45MoeConfig(DecoderConfig):
    """configuration_ernie4_5_moe.py / modeling_ernie4_5_moe.py.

    Layer i is sparse when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index ≤ i ≤
    moe_layer_end_index (-1: the last). Shared experts: one MLP of width moe_num_shared_experts ×
    moe_intermediate_size, with use_bias like the dense MLPs and attention; routed experts have
    no bias. The router's e_score_correction_bias ([1, experts], moe_statics) is an nn.Parameter
    here (unlike DeepSeek's buffer), so it counts, under the router.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    use_bias: Flag
    moe_intermediate_size: Width
    moe_k: ExpertCount
    moe_num_experts: ExpertCount
    moe_num_shared_experts: ExpertCountOrZero
    moe_layer_start_index: LayerIndex
    moe_layer_end_index: Annotated[int, Field(strict=True, ge=-1, le=1 << 14)]
    moe_layer_interval: LayerCount

    def sparse(self, index: int) -> bool:
        last = self.num_hidden_layers - 1 if self.moe_layer_end_index == -1 else self.moe_layer_end_index
        interval = self.moe_layer_interval
        return is_sparse(index, every=interval, phase=interval - 1, first=self.moe_layer_start_index, last=last)

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.use_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=bias)
        if not self.sparse(index):
            return self.layer(attention, self.gated_ffn(bias=bias))
        moe = self.moe_ffn(
            self.moe_num_experts,
            self.moe_k,
            self.moe_intermediate_size,
            shared_width=self.moe_intermediate_size * self.moe_num_shared_experts,
            num_shared_experts=self.moe_num_shared_experts,
            shared_names=ERNIE_SHARED,
            shared_bias=bias,  # the shared experts are a dense MLP, with use_bias
        )
        statics = Parameter("ffn", "router", "mlp.moe_statics.e_score_correction_bias", (1, self.moe_num_experts))
        return self.layer(attention, moe, parameters=(statics,))

    def to_spec(self):
        return replace(super().to_spec(), lm_head_bias=self.use_bias)
