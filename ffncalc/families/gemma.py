"""Gemma (tied, head_dim 256, GeGLU), Gemma-2 (four norms a layer, alternating windows) and Gemma-3 (q/k norms, 5 local : 1 global)."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from ..schema import Flag, LayerCount, Name, Width
from ..spec import Layer
from .base import DecoderConfig


class GemmaConfig(DecoderConfig):
    """configuration_gemma.py: embeddings tied unless told otherwise; head_dim 256 by default.

    Gemma's RMSNorm scales by (1 + weight), which changes its values, not its size.
    """

    architecture = "Gemma"
    tie_word_embeddings: Flag = True
    head_dim: Width | None = 256
    # Gemma names the activation `hidden_activation`; older configs only have `hidden_act`.
    hidden_act: Name = Field(
        default="gelu_pytorch_tanh", validation_alias=AliasChoices("hidden_activation", "hidden_act")
    )


class Gemma2Config(GemmaConfig):
    """configuration_gemma2.py: norms before and after both attention and FFN; even layers slide (window 4,096)."""

    architecture = "Gemma-2"
    sliding_window: Width | None = 4096

    def default_window(self, index: int) -> int | None:
        return self.sliding_window if (index + 1) % 2 else None

    def sandwich_norms(self):
        norm = self.rms_norm()
        return (
            ("input_layernorm", norm),
            ("post_attention_layernorm", norm),
            ("pre_feedforward_layernorm", norm),
            ("post_feedforward_layernorm", norm),
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return Layer(attention=self.attention(window), ffn=self.gated_ffn(), norms=self.sandwich_norms())


class Gemma3TextConfig(Gemma2Config):
    """configuration_gemma3.py (text): Gemma-2's layer plus RMSNorm on each query and key head;
    every ``sliding_window_pattern``-th layer is global, the rest slide."""

    architecture = "Gemma-3"
    sliding_window_pattern: LayerCount = 6

    def default_window(self, index: int) -> int | None:
        return self.sliding_window if (index + 1) % self.sliding_window_pattern else None

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, **self.per_head_norms())
        return Layer(attention=attention, ffn=self.gated_ffn(), norms=self.sandwich_norms())
