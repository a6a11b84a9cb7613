"""AllenAI's OLMo family: OLMo-2 (norms after the sublayers, q/k norms across heads)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..schema import Width
from ..spec import Layer
from .base import DecoderConfig


class Olmo2Config(DecoderConfig):
    """configuration_olmo2.py / modeling_olmo2.py: RMSNorm over all query heads together (heads · head_dim)
    and over all key heads; norms after attention and after the FFN instead of before."""

    architecture = "OLMo-2"
    config_class = "Olmo2Config"
    default_model_class = "Olmo2ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr

    vocab_size: Width = 50304
    pad_token_id: int | None = Field(1, strict=True)
    mlp_bias: ClassVar[bool] = False

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_dim = self.resolved_head_dim
        attention = self.attention(
            window,
            q_norm=self.rms_norm(self.num_attention_heads * head_dim),
            k_norm=self.rms_norm(self.kv_heads * head_dim),
        )
        norm = self.rms_norm()
        return self.layer(attention, self.gated_ffn(), (("post_attention_layernorm", norm), ("post_feedforward_layernorm", norm)))
