"""Mistral (a sliding window, no biases), Ministral (windows by layer_types), Ministral 3 and Mixtral (its MoE).

Mistral 3 and LightOnOCR (multimodal wrappers) are in mistral3.py, Mistral 4 (DeepSeek's lineage) in mistral4.py:
a Mistral-7B config reads this module alone."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..schema import (
    ExpertCount,
    HeadCount,
    LayerCount,
    PositionCount,
    Width,
    derives,
)
from ..spec import Layer, names
from .base import DecoderConfig, FfnWidth, HeadDim, HiddenAct, HiddenLayers, TiedEmbeddings
from .blocks import required_field, windows_of_layer_types
from .registry import family


@family("mistral")
class MistralConfig(HeadDim, HiddenAct, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_mistral.py / modeling_mistral.py: no bias switches (none are read); every layer
    slides within ``sliding_window`` (4,096 unless the config says null)."""

    architecture = "Mistral"
    config_class = "MistralConfig"
    default_model_class = "MistralForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    intermediate_size: Width = 14336
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = 4096

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers


@family("ministral")
class MinistralConfig(MistralConfig):
    """configuration_ministral.py / modular_ministral.py: Mistral's layer; ``layer_types`` (default: every
    layer sliding while sliding_window is set) gives the sliding layers the window.

    MinistralConfig leaves head_dim None when the config omits it (its __post_init__ skips Mistral's
    hidden_size // heads), and the attention then cannot be built: transformers 5.24 refuses such a config.
    """

    architecture = "Ministral"
    config_class = "MinistralConfig"
    default_model_class = "MinistralForCausalLM"

    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None

    _check_head_dim = required_field("head_dim", "MinistralConfig")

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        return super().layer_windows()

    @derives("layer_types", "every layer sliding_attention while sliding_window is set, else full_attention")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()


@family("ministral3")
class Ministral3Config(MistralConfig):
    """configuration_ministral3.py: Mistral's layer with Ministral 3's defaults (head_dim 128, no window);
    the language model of Devstral Small 2 and Mistral 3 models."""

    architecture = "Ministral 3"
    config_class = "Ministral3Config"
    default_model_class = "Ministral3ForCausalLM"

    vocab_size: Width = 131072
    num_hidden_layers: LayerCount = 34
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 262144
    pad_token_id: int | None = Field(11, strict=True)
    sliding_window: Width | None = None


MIXTRAL_MOE = names(router="block_sparse_moe.gate", experts="block_sparse_moe.experts.{e}")
MIXTRAL_EXPERT = names(gate="w1", up="w3", down="w2")


@family("mixtral")
class MixtralConfig(HeadDim, HiddenAct, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_mixtral.py / modeling_mixtral.py: Mistral's attention (window off by default);
    every FFN a block-sparse MoE of gated experts, stored one module per expert (w1 gate, w3 up, w2 down)."""

    architecture = "Mixtral"
    config_class = "MixtralConfig"
    default_model_class = "MixtralForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    moe_names = MIXTRAL_MOE
    expert_names = MIXTRAL_EXPERT

    intermediate_size: Width = 14336
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = None
    num_local_experts: ExpertCount = 8
    num_experts_per_tok: ExpertCount = 2
    routing_fields = ("num_experts_per_tok", "num_local_experts")

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)
