"""ByteDance Seed's Seed-OSS: Llama's layer, with biases on q, k and v but not on o."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer
from .base import DecoderConfig
from .registry import family


@family(
    "seed_oss",
    transformers="SeedOssConfig",
    architecture="Seed-OSS",
    model_class="SeedOssForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class SeedOssConfig(DecoderConfig):
    """configuration_seed_oss.py / modular_seed_oss.py: attention_bias on q, k and v, attention_out_bias on o;
    mlp_bias on gate, up and down; head_dim 128 unless the config says null (then hidden_size // heads)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    attention_bias: Flag
    attention_out_bias: Flag

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, o_bias=self.attention_out_bias), self.gated_ffn())
