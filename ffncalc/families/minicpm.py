"""OpenBMB's MiniCPM3: Llama's layer with DeepSeek-V2's multi-head latent attention."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Attention, Layer, Mla
from .base import DecoderConfig
from .blocks import MLA_ATTENTION
from .registry import family


@family("minicpm3", transformers="MiniCPM3Config", architecture="MiniCPM3", model_class="MiniCPM3ForCausalLM")
class MiniCPM3Config(DecoderConfig):
    """configuration_minicpm3.py / modular_minicpm3.py: Llama's decoder layer, SwiGLU and norms around
    DeepseekV2Attention (MLA: queries through a q_lora_rank latent, or q_proj when q_lora_rank is null; keys and
    values from a kv_lora_rank latent plus a shared rotary key). attention_bias reaches q_a, kv_a and o_proj
    only. transformers sets head_dim to qk_rope_head_dim whatever the config says; v_head_dim defaults to
    hidden_size // num_attention_heads. scale_emb, scale_depth and dim_model_base scale activations only.
    """

    attention_names = MLA_ATTENTION

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None  # MLA: every head reads the one latent, whatever this says
    max_position_embeddings: PositionCount
    kv_lora_rank: Width
    q_lora_rank: Width | None
    qk_nope_head_dim: Width
    qk_rope_head_dim: Width
    v_head_dim: Width | None
    # head_dim is not read: transformers overwrites it with qk_rope_head_dim

    @property
    @derives("v_head_dim", "hidden_size // num_attention_heads")
    def resolved_v_head_dim(self) -> int:
        return self.v_head_dim or self.hidden_size // self.num_attention_heads

    def mla_attention(self) -> Attention:
        mla = Mla(
            self.q_lora_rank, self.kv_lora_rank, self.qk_nope_head_dim, self.qk_rope_head_dim, self.resolved_v_head_dim
        )
        return self.attention(
            None,
            num_kv_heads=self.num_attention_heads,
            qk_head_dim=self.qk_nope_head_dim + self.qk_rope_head_dim,
            v_head_dim=self.resolved_v_head_dim,
            v_bias=False,
            mla=mla,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.mla_attention(), self.gated_ffn())
