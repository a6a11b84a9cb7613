"""Mistral (a sliding window, no biases), Ministral (windows by layer_types), Ministral 3 and Mixtral (its MoE).

Mistral 3 and LightOnOCR (multimodal wrappers) are in mistral3.py, Mistral 4 (DeepSeek's lineage) in mistral4.py:
a Mistral-7B config reads this module alone."""

from __future__ import annotations

from typing import Literal

from ..schema import (
    ExpertCount,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
)
from ..spec import Layer, names
from .base import DecoderConfig
from .blocks import required_field, windows_of_layer_types
from .registry import family


@family(
    "mistral",
    transformers="MistralConfig",
    architecture="Mistral",
    model_class="MistralForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class MistralConfig(DecoderConfig):
    """configuration_mistral.py / modeling_mistral.py: no bias switches (none are read); every layer
    slides within ``sliding_window`` (4,096 unless the config says null)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers


@family("ministral", transformers="MinistralConfig", architecture="Ministral", model_class="MinistralForCausalLM")
class MinistralConfig(MistralConfig):
    """configuration_ministral.py / modular_ministral.py: Mistral's layer; ``layer_types`` (default: every
    layer sliding while sliding_window is set) gives the sliding layers the window.

    MinistralConfig leaves head_dim None when the config omits it (its __post_init__ skips Mistral's
    hidden_size // heads), and the attention then cannot be built: transformers 5.24 refuses such a config.
    """

    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    _check_head_dim = required_field("head_dim", "MinistralConfig")

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        return super().layer_windows()

    @derives("layer_types", "every layer sliding_attention while sliding_window is set, else full_attention")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()


@family("ministral3", transformers="Ministral3Config", architecture="Ministral 3", model_class="Ministral3ForCausalLM")
class Ministral3Config(MistralConfig):
    """configuration_ministral3.py: Mistral's layer with Ministral 3's defaults (head_dim 128, no window);
    the language model of Devstral Small 2 and Mistral 3 models."""


MIXTRAL_MOE = names(router="block_sparse_moe.gate", experts="block_sparse_moe.experts.{e}")
MIXTRAL_EXPERT = names(gate="w1", up="w3", down="w2")


@family(
    "mixtral",
    transformers="MixtralConfig",
    architecture="Mixtral",
    model_class="MixtralForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_local_experts"),
)
class MixtralConfig(DecoderConfig):
    """configuration_mixtral.py / modeling_mixtral.py: Mistral's attention (window off by default);
    every FFN a block-sparse MoE of gated experts, stored one module per expert (w1 gate, w3 up, w2 down)."""

    moe_names = MIXTRAL_MOE
    expert_names = MIXTRAL_EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)
