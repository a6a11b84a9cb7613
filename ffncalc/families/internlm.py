"""InternLM3 (configuration_internlm3.py): Llama's layer with InternLM3's defaults and bias switches."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from .base import DecoderConfig
from .registry import family


@family("internlm3", transformers="InternLM3Config", architecture="InternLM3", model_class="LlamaForCausalLM")
class InternLM3Config(DecoderConfig):
    """configuration_internlm3.py: Llama's implementation (transformers builds LlamaForCausalLM) with InternLM3's
    defaults; its configs name the bias switches qkv_bias (q, k, v and o) and bias (the MLP), and transformers
    refuses them unequal."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    attention_bias: Flag
    mlp_bias: Flag

    @model_validator(mode="after")
    def _check_biases(self) -> InternLM3Config:
        if self.attention_bias != self.mlp_bias:
            raise ValueError(
                f"qkv_bias ({self.attention_bias}) must equal bias ({self.mlp_bias}), as transformers requires: it "
                "builds InternLM3 with Llama's layer"
            )
        return self
