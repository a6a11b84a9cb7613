"""InternLM3 (configuration_internlm3.py): Llama's layer with InternLM3's defaults and bias switches."""

from __future__ import annotations

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from .base import DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, TiedEmbeddings
from .registry import family


@family("internlm3")
class InternLM3Config(HiddenAct, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_internlm3.py: Llama's implementation (transformers builds LlamaForCausalLM) with InternLM3's
    defaults; its configs name the bias switches qkv_bias (q, k, v and o) and bias (the MLP), and transformers
    refuses them unequal."""

    architecture = "InternLM3"
    config_class = "InternLM3Config"
    default_model_class = "LlamaForCausalLM"

    vocab_size: Width = 128512
    intermediate_size: Width = 10240
    num_hidden_layers: LayerCount = 48
    num_key_value_heads: HeadCount | None = 2
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 32768
    pad_token_id: int | None = Field(2, strict=True)
    attention_bias: Flag = Field(False, validation_alias=AliasChoices("attention_bias", "qkv_bias"))
    mlp_bias: Flag = Field(False, validation_alias=AliasChoices("mlp_bias", "bias"))

    @model_validator(mode="after")
    def _check_biases(self) -> InternLM3Config:
        if self.attention_bias != self.mlp_bias:
            raise ValueError(
                f"qkv_bias ({self.attention_bias}) must equal bias ({self.mlp_bias}), as transformers requires: it "
                "builds InternLM3 with Llama's layer"
            )
        return self
