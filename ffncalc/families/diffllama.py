"""DiffLlama: Llama with differential attention (https://huggingface.co/papers/2410.05258)."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, Parameter
from .base import DecoderConfig
from .registry import family

LAMBDAS = ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")


@family("diffllama", transformers="DiffLlamaConfig", architecture="DiffLlama", model_class="DiffLlamaForCausalLM")
class DiffLlamaConfig(DecoderConfig):
    """configuration_diffllama.py / modeling_diffllama.py (DiffLlamaAttention): Llama's q, k, v and o projections
    (attention_bias on all four), its norms and gated MLP (no bias). The attention is run twice over the same queries
    and keys: each call reads one half of the value heads, repeated back to num_key_value_heads, so each call costs a
    Llama attention's scores and values, and the layer twice that; the two outputs are joined, subtracted with a
    learned λ (lambda_q1, lambda_k1, lambda_q2, lambda_k2: one head_dim each) and normalised (groupnorm, an RMSNorm of
    2 · head_dim without weights) before o_proj. num_key_value_heads must be even (transformers refuses otherwise)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None

    @model_validator(mode="after")
    def _check_value_halves(self) -> DiffLlamaConfig:
        if self.kv_heads % 2:
            # DiffLlamaAttention.__init__: torch.chunk(value_states, 2, dim=1) needs the KV heads to split evenly
            raise ValueError(
                f"num_key_value_heads ({self.kv_heads}) must be even: DiffLlama splits the value heads in two halves"
            )
        return self

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_dim = self.resolved_head_dim
        lambdas = tuple(Parameter("attention", name, f"self_attn.{name}", (head_dim,)) for name in LAMBDAS)
        return self.layer(self.attention(window, passes=2), self.gated_ffn(bias=False), parameters=lambdas)
