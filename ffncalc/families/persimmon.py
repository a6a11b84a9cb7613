"""Adept's Persimmon-8B: a LayerNorm decoder with fused query_key_value, q/k LayerNorms and a squared-ReLU MLP."""

from __future__ import annotations

from ..schema import Flag, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelNames, ModelSpec, Norm, names
from ..values import replace
from .base import DecoderConfig
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


@family("persimmon", transformers="PersimmonConfig", architecture="Persimmon", model_class="PersimmonForCausalLM")
class PersimmonConfig(DecoderConfig):
    """configuration_persimmon.py / modeling_persimmon.py: q, k, v fused in query_key_value ([3 · H, H], heads
    interleaved) and dense, with biases; with qk_layernorm (the default) a LayerNorm with bias over each query
    and key head; a plain MLP with biases (relu2); LayerNorms with biases; an untied head without bias. Every
    head attends (no GQA), head_dim = hidden_size // heads, which transformers requires to divide."""

    attention_names = PERSIMMON_ATTENTION
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    max_position_embeddings: PositionCount
    qk_layernorm: Flag
    # No num_key_value_heads nor head_dim: every head its own keys and values, of hidden_size // heads.

    @property
    def attention_biased(self) -> bool:
        """q, k, v and dense always carry biases (no attention_bias switch in its configuration class)."""
        return True

    @property
    def mlp_biased(self) -> bool:
        """The MLP's projections always carry biases (no mlp_bias switch in its configuration class)."""
        return True

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
