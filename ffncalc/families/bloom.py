"""BLOOM: ALiBi instead of positions, a LayerNorm on the embeddings, fused query_key_value."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, LayerCount, Width
from ..spec import Extra, Layer, ModelNames, ModelSpec, names
from .base import LayerNormDecoder
from .blocks import heads_divide
from .registry import family

BLOOM_ATTENTION = names(
    q="self_attention.query_key_value",
    k="self_attention.query_key_value",
    v="self_attention.query_key_value",
    o="self_attention.dense",
)
BLOOM_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


@family(
    "bloom",
    transformers="BloomConfig",
    architecture="BLOOM",
    model_class="BloomForCausalLM",
    other_names={
        "hidden_size": "BloomConfig reads an n_embed key as hidden_size (backward compatibility, not in attribute_map)"
    },
)
class BloomConfig(LayerNormDecoder):
    """configuration_bloom.py / modeling_bloom.py: ALiBi (no parameters); a LayerNorm on the word
    embeddings; fused query_key_value, dense and a 4·H FFN, all with biases; a tied head."""

    vocab_size: Width
    hidden_size: Width = Field(validation_alias=AliasChoices("hidden_size", "n_embed"))
    n_layer: LayerCount
    n_head: HeadCount
    tie_word_embeddings: Flag
    _check_heads = heads_divide("hidden_size", "n_head")

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(4 * self.width, "gelu", True, BLOOM_MLP)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        layer = Layer(self.layer_name, self.mha(self.n_head, True, BLOOM_ATTENTION), ffn, norms)
        embedding_norm = Extra("norm", "transformer.word_embeddings_layernorm", self.layer_norm())
        return self.decoder_spec(
            layer,
            self.n_layer,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames("transformer.word_embeddings", "transformer.ln_f", base_model_prefix="transformer"),
            extras=(embedding_norm,),
        )
