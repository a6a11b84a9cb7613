"""Adept's Persimmon-8B: a LayerNorm decoder with fused query_key_value, q/k LayerNorms and a squared-ReLU MLP."""

from __future__ import annotations

from typing import ClassVar

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelNames, ModelSpec, Norm, names
from ..values import replace
from .base import DecoderConfig, FfnWidth, HiddenLayers, TiedEmbeddings
from .registry import family

PERSIMMON_ATTENTION = names(
    q="self_attn.query_key_value",
    k="self_attn.query_key_value",
    v="self_attn.query_key_value",
    o="self_attn.dense",
    q_norm="self_attn.q_layernorm",
    k_norm="self_attn.k_layernorm",
)
PERSIMMON_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


@family("persimmon")
class PersimmonConfig(TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_persimmon.py / modeling_persimmon.py: q, k, v fused in query_key_value ([3 · H, H], heads
    interleaved) and dense, with biases; with qk_layernorm (the default) a LayerNorm with bias over each query
    and key head; a plain MLP with biases (relu2); LayerNorms with biases; an untied head without bias. Every
    head attends (no GQA), head_dim = hidden_size // heads, which transformers requires to divide."""

    architecture = "Persimmon"
    config_class = "PersimmonConfig"
    default_model_class = "PersimmonForCausalLM"
    attention_names = PERSIMMON_ATTENTION
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    vocab_size: Width = 262144
    hidden_size: Width = 4096
    intermediate_size: Width = 16384
    num_hidden_layers: LayerCount = 36
    num_attention_heads: HeadCount = 64
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 16384
    qk_layernorm: Flag = True
    num_key_value_heads: ClassVar[None] = None
    head_dim: ClassVar[None] = None
    attention_bias: ClassVar[bool] = True
    mlp_bias: ClassVar[bool] = True

    def layer_norm(self, dim: int | None = None) -> Norm:
        return Norm("layernorm", dim or self.hidden_size, bias=True)

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        return (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_norms = {}
        if self.qk_layernorm:
            norm = self.layer_norm(self.resolved_head_dim)
            head_norms = {"q_norm": norm, "k_norm": norm}
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, PERSIMMON_MLP, bias=True)
        return self.layer(self.attention(window, **head_norms), ffn)

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())
