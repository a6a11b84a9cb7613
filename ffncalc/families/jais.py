"""Inception's Jais 2: Llama's attention with LayerNorms (with biases) and Nemotron's plain MLP."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelSpec, Norm
from ..values import replace
from .base import DecoderConfig
from .registry import family


@family("jais2", transformers="Jais2Config", architecture="Jais 2", model_class="Jais2ForCausalLM")
class Jais2Config(DecoderConfig):
    """configuration_jais2.py / modular_jais2.py: Llama's attention (attention_bias on q, k, v, o); an up/down MLP
    of hidden_act (relu2) with mlp_bias (NemotronMLP); LayerNorms with biases before attention, before the MLP and
    at the end."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount
    attention_bias: Flag
    mlp_bias: Flag

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.layer_norm()
        return (("input_layernorm", norm), ("post_attention_layernorm", norm))

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, self.mlp_bias)
        return self.layer(self.attention(window), mlp)

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())
