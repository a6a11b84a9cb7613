"""Stability AI's StableLM (StableLM-3B-4E1T, StableLM-2): Llama's layout with LayerNorms, optional q/k/v
biases and a LayerNorm per query and key head."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, ModelSpec, Norm, Norms, Parameter
from ..values import replace
from .base import DecoderConfig
from .registry import family


@family("stablelm", transformers="StableLmConfig", architecture="StableLM", model_class="StableLmForCausalLM")
class StableLmConfig(DecoderConfig):
    """configuration_stablelm.py / modeling_stablelm.py: q, k, v biased by use_qkv_bias, o never; SwiGLU
    without biases; LayerNorms with biases before attention and (unless use_parallel_residual, where the
    MLP reads the same input) before the MLP. With qk_layernorm, a LayerNorm without bias for each query
    head and each key head (q_layernorm.norms.{h}), head_dim wide. head_dim is hidden_size // heads, which
    transformers requires to divide."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    use_qkv_bias: Flag
    qk_layernorm: Flag
    use_parallel_residual: Flag
    # No head_dim: hidden_size // heads (StableLmConfig has no such field)

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
