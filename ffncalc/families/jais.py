"""Inception's Jais 2: Llama's attention with LayerNorms (with biases) and Nemotron's plain MLP."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelSpec, Norm
from ..values import replace
from .base import DecoderConfig, FfnWidth, HeadDim, HiddenLayers, KvHeads, TiedEmbeddings
from .registry import family


@family("jais2")
class Jais2Config(HeadDim, KvHeads, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_jais2.py / modular_jais2.py: Llama's attention (attention_bias on q, k, v, o); an up/down MLP
    of hidden_act (relu2) with mlp_bias (NemotronMLP); LayerNorms with biases before attention, before the MLP and
    at the end."""

    architecture = "Jais 2"
    config_class = "Jais2Config"
    default_model_class = "Jais2ForCausalLM"

    vocab_size: Width = 150272
    hidden_size: Width = 3328
    intermediate_size: Width = 26624
    num_attention_heads: HeadCount = 26
    num_hidden_layers: LayerCount = 32
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 8192
    attention_bias: Flag = True
    mlp_bias: Flag = True

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
