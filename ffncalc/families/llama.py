"""Llama, Mistral and Mixtral: the reference decoder, its sliding-window variant and its MoE."""

from __future__ import annotations

from ..schema import ExpertCount, Width
from ..spec import Layer, MoeFfn
from .base import DecoderConfig, experts_check


class LlamaConfig(DecoderConfig):
    """configuration_llama.py: q/k/v/o share ``attention_bias``; gate/up/down share ``mlp_bias``."""

    architecture = "Llama"


class MistralConfig(DecoderConfig):
    """configuration_mistral.py: Llama without biases; a 4,096-token window unless the config says null."""

    architecture = "Mistral"
    sliding_window: Width | None = 4096


class MixtralConfig(DecoderConfig):
    """configuration_mixtral.py: Mistral attention; every FFN is a block-sparse MoE of gated experts."""

    architecture = "Mixtral"
    num_local_experts: ExpertCount = 8
    num_experts_per_tok: ExpertCount = 2
    _check_experts = experts_check("num_experts_per_tok", "num_local_experts")

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = MoeFfn(self.hidden_size, self.num_local_experts, self.num_experts_per_tok, self.gated_ffn(bias=False))
        return Layer(attention=self.attention(window), ffn=moe, norms=self.pre_norms())
