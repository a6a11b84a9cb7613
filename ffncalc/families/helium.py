"""Kyutai's Helium: Llama's layer, its o_proj always hidden_size → hidden_size without bias."""

from __future__ import annotations

from pydantic import Field

from ..schema import HeadCount, LayerCount, PositionCount, Width
from ..spec import Layer
from .base import AttentionBias, DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, MlpBias, TiedEmbeddings
from .registry import family


@family("helium")
class HeliumConfig(HiddenAct, AttentionBias, MlpBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_helium.py / modular_helium.py: attention_bias on q, k and v; o_proj reads hidden_size
    inputs (not heads × head_dim) and has no bias; mlp_bias on the MLP; head_dim 128."""

    architecture = "Helium"
    config_class = "HeliumConfig"
    default_model_class = "HeliumForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    vocab_size: Width = 48000
    hidden_size: Width = 2560
    intermediate_size: Width = 7040
    num_hidden_layers: LayerCount = 24
    num_attention_heads: HeadCount = 20
    num_key_value_heads: HeadCount | None = 20
    head_dim: Width = 128
    max_position_embeddings: PositionCount = 4096
    pad_token_id: int | None = Field(3, strict=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, o_bias=False, o_input=self.hidden_size)
        return self.layer(attention, self.gated_ffn())
