"""Phi-3 / Phi-3.5 / Phi-4 (Llama's shapes, fused qkv_proj and gate_up_proj) and PhiMoE."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from pydantic import Field

from ..schema import ExpertCount, Flag, HeadCount, PositionCount, Width
from ..spec import Layer, ModelSpec, Norm, names
from .base import DecoderConfig
from .mistral import MIXTRAL_EXPERT, MIXTRAL_MOE

PHI3_ATTENTION = names(q="self_attn.qkv_proj", k="self_attn.qkv_proj", v="self_attn.qkv_proj", o="self_attn.o_proj")
PHI3_MLP = names(gate="mlp.gate_up_proj", up="mlp.gate_up_proj", down="mlp.down_proj")


class Phi3Config(DecoderConfig):
    """configuration_phi3.py / modeling_phi3.py: q, k, v fused in qkv_proj and gate, up in gate_up_proj
    (names, not counts, change); no bias switches, so none are read. Windows: every layer slides
    within sliding_window when one is set."""

    architecture = "Phi-3"
    config_class = "Phi3Config"
    default_model_class = "Phi3ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    attention_names = PHI3_ATTENTION
    mlp_names = PHI3_MLP

    vocab_size: Width = 32064
    hidden_size: Width = 3072
    pad_token_id: int | None = Field(32000, strict=True)
    intermediate_size: Width = 8192
    max_position_embeddings: PositionCount = 4096
    sliding_window: Width | None = None
    attention_bias: ClassVar[bool] = False
    mlp_bias: ClassVar[bool] = False

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers


class PhimoeConfig(DecoderConfig):
    """configuration_phimoe.py: Mixtral's layout with LayerNorms (weight and bias) instead of RMSNorms,
    biased attention (attention_bias) and a head bias (lm_head_bias)."""

    architecture = "PhiMoE"
    config_class = "PhimoeConfig"
    default_model_class = "PhimoeForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    moe_names = MIXTRAL_MOE
    expert_names = MIXTRAL_EXPERT

    vocab_size: Width = 32064
    intermediate_size: Width = 6400
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = None
    num_local_experts: ExpertCount = 16
    num_experts_per_tok: ExpertCount = 2
    attention_bias: Flag = False
    lm_head_bias: Flag = False
    mlp_bias: ClassVar[bool] = False
    routing_fields = ("num_experts_per_tok", "num_local_experts")

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        return (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm(), lm_head_bias=self.lm_head_bias)
