"""Tencent's Youtu-LLM: DeepSeek-V3's multi-head latent attention in a Llama layer with a dense SwiGLU MLP."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer
from .base import DecoderConfig
from .blocks import MLA_ATTENTION
from .deepseek import mla_attention
from .registry import family


@family(
    "youtu",
    transformers="YoutuConfig",
    architecture="Youtu-LLM",
    model_class="YoutuForCausalLM",
    heads_divide_hidden=False,  # MLA's widths come from its own fields
)
class YoutuConfig(DecoderConfig):
    """configuration_youtu.py / modular_youtu.py: DeepseekV3Attention (queries through a q_lora_rank latent unless it
    is null, keys and values through a kv_lora_rank latent; attention_bias on q_a, kv_a and o_proj) and a gated MLP
    of intermediate_size without biases in every layer; tied embeddings by default. DeepSeek-V3's MoE fields are
    not fields of YoutuConfig."""

    attention_names = MLA_ATTENTION

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    kv_lora_rank: Width
    q_lora_rank: Width | None
    qk_rope_head_dim: Width
    v_head_dim: Width
    qk_nope_head_dim: Width
    max_position_embeddings: PositionCount
    # No head_dim: MLA's widths come from the fields above

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = mla_attention(self, window)
        return self.layer(attention, self.gated_ffn())
