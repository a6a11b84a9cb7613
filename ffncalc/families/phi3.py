"""Phi-3 / Phi-3.5 / Phi-4: Llama's shapes with fused qkv_proj and gate_up_proj, and no biases."""

from __future__ import annotations

from ..spec import Layer
from .base import DecoderConfig


class Phi3Config(DecoderConfig):
    """configuration_phi3.py / modeling_phi3.py: fusing changes module names, not parameter counts;
    modeling_phi3 has no bias switches, so none are read."""

    architecture = "Phi-3"

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, q_bias=False, k_bias=False, v_bias=False, o_bias=False)
        return Layer(attention=attention, ffn=self.gated_ffn(bias=False), norms=self.pre_norms())
