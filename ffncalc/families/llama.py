"""Llama (configuration_llama.py): the decoder most families refine."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from .base import DecoderConfig
from .registry import family


@family("llama", transformers="LlamaConfig", architecture="Llama", model_class="LlamaForCausalLM")
class LlamaConfig(DecoderConfig):
    """configuration_llama.py: q/k/v/o share ``attention_bias``; gate/up/down share ``mlp_bias``."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None
