"""Stability AI's StableLM (StableLM-3B-4E1T, StableLM-2): Llama's layout with LayerNorms, optional q/k/v
biases and a LayerNorm per query and key head."""

from __future__ import annotations

from typing import ClassVar

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, ModelSpec, Norm, Norms, Parameter
from ..values import replace
from .base import DecoderConfig, FfnWidth, HiddenLayers, TiedEmbeddings
from .registry import family


@family("stablelm")
class StableLmConfig(TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_stablelm.py / modeling_stablelm.py: q, k, v biased by use_qkv_bias, o never; SwiGLU
    without biases; LayerNorms with biases before attention and (unless use_parallel_residual, where the
    MLP reads the same input) before the MLP. With qk_layernorm, a LayerNorm without bias for each query
    head and each key head (q_layernorm.norms.{h}), head_dim wide. head_dim is hidden_size // heads, which
    transformers requires to divide."""

    architecture = "StableLM"
    config_class = "StableLmConfig"
    default_model_class = "StableLmForCausalLM"

    vocab_size: Width = 50304
    intermediate_size: Width = 6912
    hidden_size: Width = 2560
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount = 32
    hidden_act: Name = "silu"
    max_position_embeddings: PositionCount = 4096
    use_qkv_bias: Flag = False
    qk_layernorm: Flag = False
    use_parallel_residual: Flag = False
    head_dim: ClassVar[None] = None

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def head_norms(self) -> tuple[Parameter, ...]:
        """One LayerNorm weight of head_dim per query head and per key head (no biases)."""
        if not self.qk_layernorm:
            return ()
        head_dim = self.resolved_head_dim
        return tuple(
            Parameter("norm", f"{kind}_norm", f"self_attn.{kind}_layernorm.norms.{head}.weight", (head_dim,))
            for kind, heads in (("q", self.num_attention_heads), ("k", self.kv_heads))
            for head in range(heads)
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.use_qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=False)
        norms: Norms = (("input_layernorm", self.layer_norm()),)
        if not self.use_parallel_residual:
            norms += (("post_attention_layernorm", self.layer_norm()),)
        return self.layer(attention, self.gated_ffn(), norms, parameters=self.head_norms())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())
