"""Tencent's Youtu-LLM: DeepSeek-V3's multi-head latent attention in a Llama layer with a dense SwiGLU MLP."""

from __future__ import annotations

from typing import ClassVar

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import Layer
from .base import AttentionBias, DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, TiedEmbeddings
from .blocks import MLA_ATTENTION
from .deepseek import mla_attention
from .registry import family


@family("youtu")
class YoutuConfig(HiddenAct, AttentionBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_youtu.py / modular_youtu.py: DeepseekV3Attention (queries through a q_lora_rank latent unless it
    is null, keys and values through a kv_lora_rank latent; attention_bias on q_a, kv_a and o_proj) and a gated MLP
    of intermediate_size without biases in every layer; tied embeddings by default. DeepSeek-V3's MoE fields are
    not fields of YoutuConfig."""

    architecture = "Youtu-LLM"
    config_class = "YoutuConfig"
    default_model_class = "YoutuForCausalLM"
    heads_divide_hidden = False  # MLA's widths come from its own fields
    attention_names = MLA_ATTENTION

    vocab_size: Width = 128256
    hidden_size: Width = 2048
    intermediate_size: Width = 6144
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount = 16
    kv_lora_rank: Width = 512
    q_lora_rank: Width | None = 1536
    qk_rope_head_dim: Width = 64
    v_head_dim: Width = 128
    qk_nope_head_dim: Width = 128
    max_position_embeddings: PositionCount = 131072
    tie_word_embeddings: Flag = True
    head_dim: ClassVar[None] = None  # MLA's widths come from the fields above

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = mla_attention(self, window)
        return self.layer(attention, self.gated_ffn())
