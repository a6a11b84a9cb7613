"""Falcon (7B, 40B, 180B): multi-query or grouped KV heads, parallel attention and FFN."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, ModelNames, ModelSpec, Norm, names
from .base import LayerNormDecoder
from .gpt import heads_divide

FALCON_ATTENTION = names(
    q="self_attention.query_key_value",
    k="self_attention.query_key_value",
    v="self_attention.query_key_value",
    o="self_attention.dense",
)
FALCON_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


class FalconConfig(LayerNormDecoder):
    """configuration_falcon.py / modeling_falcon.py.

    KV heads: num_kv_heads with new_decoder_architecture, 1 with multi_query, else all heads.
    Norms: ln_attn and ln_mlp (new architecture, two in parallel), one input_layernorm
    (parallel_attn), or input and post-attention (sequential). Biases follow ``bias``.
    """

    architecture = "Falcon"
    config_class = "FalconConfig"
    default_model_class = "FalconForCausalLM"
    derived_defaults = {"num_kv_heads": "num_attention_heads", "ffn_hidden_size": "4 · hidden_size"}
    informational_fields = frozenset({"max_position_embeddings"})

    vocab_size: Width = 65024
    hidden_size: Width = Field(4544, validation_alias=AliasChoices("hidden_size", "n_embed"))
    num_hidden_layers: LayerCount = Field(32, validation_alias=AliasChoices("num_hidden_layers", "n_layer"))
    num_attention_heads: HeadCount = Field(71, validation_alias=AliasChoices("num_attention_heads", "n_head"))
    num_ln_in_parallel_attn: LayerCount | None = None
    num_kv_heads: HeadCount | None = None
    alibi: Flag = False
    new_decoder_architecture: Flag = False
    multi_query: Flag = True
    parallel_attn: Flag = True
    bias: Flag = False
    max_position_embeddings: PositionCount = 2048
    ffn_hidden_size: Width | None = None
    activation: Name = "gelu"
    tie_word_embeddings: Flag = True
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    def resolved(self, field: str):
        if field == "num_kv_heads":
            return self.num_kv_heads or self.num_attention_heads
        if field == "ffn_hidden_size":
            return self.ffn_hidden_size or 4 * self.hidden_size
        return super().resolved(field)

    def kv_heads(self) -> int:
        if self.new_decoder_architecture:
            return self.num_kv_heads or self.num_attention_heads
        return 1 if self.multi_query else self.num_attention_heads

    def norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.layer_norm()
        if not self.parallel_attn:
            return (("input_layernorm", norm), ("post_attention_layernorm", norm))
        two = self.num_ln_in_parallel_attn or (2 if self.new_decoder_architecture else 1)
        return (("ln_attn", norm), ("ln_mlp", norm)) if two == 2 else (("input_layernorm", norm),)

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.ffn_hidden_size or 4 * self.width, self.activation, self.bias, FALCON_MLP)
        attention = self.mha(self.num_attention_heads, self.bias, FALCON_ATTENTION, kv_heads=self.kv_heads())
        layer = Layer(self.layer_name, attention, ffn, self.norms())
        return self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames("transformer.word_embeddings", "transformer.ln_f", base_model_prefix="transformer"),
        )
