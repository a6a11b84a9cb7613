"""Kyutai's Helium: Llama's layer, its o_proj always hidden_size → hidden_size without bias."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer
from .base import DecoderConfig
from .registry import family


@family(
    "helium",
    transformers="HeliumConfig",
    architecture="Helium",
    model_class="HeliumForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class HeliumConfig(DecoderConfig):
    """configuration_helium.py / modular_helium.py: attention_bias on q, k and v; o_proj reads hidden_size
    inputs (not heads × head_dim) and has no bias; mlp_bias on the MLP; head_dim 128."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, o_bias=False, o_input=self.hidden_size)
        return self.layer(attention, self.gated_ffn())
