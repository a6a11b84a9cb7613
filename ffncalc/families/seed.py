"""ByteDance Seed's Seed-OSS: Llama's layer, with biases on q, k and v but not on o."""

from __future__ import annotations

from pydantic import Field

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import Layer
from .base import DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, MlpBias, TiedEmbeddings
from .registry import family


@family("seed_oss")
class SeedOssConfig(HiddenAct, MlpBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_seed_oss.py / modular_seed_oss.py: attention_bias on q, k and v, attention_out_bias on o;
    mlp_bias on gate, up and down; head_dim 128 unless the config says null (then hidden_size // heads)."""

    architecture = "Seed-OSS"
    config_class = "SeedOssConfig"
    default_model_class = "SeedOssForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    vocab_size: Width = 155136
    hidden_size: Width = 4096
    intermediate_size: Width = 27648
    num_hidden_layers: LayerCount = 64
    num_attention_heads: HeadCount = 80
    num_key_value_heads: HeadCount | None = 8
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 524288
    pad_token_id: int | None = Field(1, strict=True)
    attention_bias: Flag = True
    attention_out_bias: Flag = False

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, o_bias=self.attention_out_bias), self.gated_ffn())
