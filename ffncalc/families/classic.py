"""The LayerNorm decoders before Llama: GPT-J, GPT-NeoX, BLOOM, Falcon and OPT.

Each names its fields its own way (n_embd, n_embed, d_model, ffn_dim …); each adapter reads
its family's names, with transformers' defaults, and builds the same neutral spec.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HFConfig, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, Linear, ModelSpec, Norm


def _alias(*names: str):
    return AliasChoices(*names)


class LayerNormDecoder(HFConfig):
    """Shared by the adapters below: hidden, heads, layers, vocabulary, and the spec they assemble."""

    vocab_size: Width
    tie_word_embeddings: Flag = True

    @property
    def width(self) -> int:  # pragma: no cover - each adapter names its own field
        raise NotImplementedError

    def layer_norm(self, bias: bool = True) -> Norm:
        return Norm("layernorm", self.width, bias=bias)

    def mha(self, heads: int, bias: bool, kv_heads: int | None = None) -> Attention:
        return Attention.uniform(self.width, heads, bias, num_kv_heads=kv_heads)

    def spec(self, layer: Layer, layers: int, final_norm: Norm | None, **fields) -> ModelSpec:
        return self.make_spec(
            hidden_size=self.width,
            vocab_size=self.vocab_size,
            layers=(layer,) * layers,
            final_norm=final_norm,
            tie_word_embeddings=self.tie_word_embeddings,
            **fields,
        )


class GptjConfig(LayerNormDecoder):
    """configuration_gptj.py / modeling_gptj.py: attention and FFN in parallel after one LayerNorm;
    q, k, v, out without biases; fc_in and fc_out with; an untied head with a bias."""

    architecture = "GPT-J"
    n_embd: Width = Field(validation_alias=_alias("n_embd", "hidden_size"))
    n_layer: LayerCount = Field(validation_alias=_alias("n_layer", "num_hidden_layers"))
    n_head: HeadCount = Field(validation_alias=_alias("n_head", "num_attention_heads"))
    n_inner: Width | None = None
    activation_function: Name = "gelu_new"
    tie_word_embeddings: Flag = False

    @property
    def width(self) -> int:
        return self.n_embd

    def to_spec(self) -> ModelSpec:
        ffn = DenseFfn(self.width, self.n_inner or 4 * self.width, gated=False, activation=self.activation_function, bias=True)
        layer = Layer(self.mha(self.n_head, bias=False), ffn, (("ln_1", self.layer_norm()),), parallel=True)
        return self.spec(layer, self.n_layer, self.layer_norm(), lm_head_bias=True, notes=self.card_note())

    def card_note(self) -> tuple[str, ...]:
        """GPT-J-6B's model card gives n_parameters as mesh-transformer-jax counted them, over 8 shards."""
        shards, hidden, layers = 8, self.width, self.n_layer
        copies = (shards - 1) * layers * (2 * hidden + hidden) + (shards - 1) * 2 * hidden + shards * hidden
        return (
            "mesh-transformer-jax, where GPT-J was trained, counts parameters over its 8 model-parallel shards: "
            "each shard keeps its own copy of every layer norm, of fc_out's bias and of the final norm, and an "
            f"embedding bias of {hidden:,}; for this config that is {copies:,} more than the modules hold "
            "(the GPT-J-6B model card's n_parameters = this total + that).",
        )


class GptNeoxConfig(LayerNormDecoder):
    """configuration_gpt_neox.py: fused query_key_value and dense with biases (attention_bias), two
    LayerNorms a layer, an untied embed_out head; use_parallel_residual changes the order only."""

    architecture = "GPT-NeoX"
    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    attention_bias: Flag = True
    use_parallel_residual: Flag = True
    hidden_act: Name = "gelu"
    tie_word_embeddings: Flag = False

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        ffn = DenseFfn(self.width, self.intermediate_size, gated=False, activation=self.hidden_act, bias=True)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        attention = self.mha(self.num_attention_heads, bias=self.attention_bias)
        layer = Layer(attention, ffn, norms, parallel=self.use_parallel_residual)
        return self.spec(layer, self.num_hidden_layers, self.layer_norm())


class BloomConfig(LayerNormDecoder):
    """configuration_bloom.py: ALiBi instead of positions (no parameters); a LayerNorm on the
    embeddings; fused query_key_value, dense and a 4·H FFN, all with biases; tied head."""

    architecture = "BLOOM"
    hidden_size: Width = Field(validation_alias=_alias("hidden_size", "n_embed"))
    n_layer: LayerCount = Field(validation_alias=_alias("n_layer", "num_hidden_layers"))
    n_head: HeadCount = Field(validation_alias=_alias("n_head", "num_attention_heads"))

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        ffn = DenseFfn(self.width, 4 * self.width, gated=False, activation="gelu", bias=True)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        layer = Layer(self.mha(self.n_head, bias=True), ffn, norms)
        embedding_norm = Extra("norm", "word_embeddings_layernorm", self.layer_norm())
        return self.spec(layer, self.n_layer, self.layer_norm(), extras=(embedding_norm,))


class FalconConfig(LayerNormDecoder):
    """configuration_falcon.py / modeling_falcon.py.

    KV heads: num_kv_heads with new_decoder_architecture, 1 with multi_query, else all heads.
    Norms: ln_attn and ln_mlp (new architecture, two in parallel), one input_layernorm
    (parallel_attn), or input and post-attention (sequential). Biases follow ``bias``.
    """

    architecture = "Falcon"
    hidden_size: Width
    num_hidden_layers: LayerCount = Field(validation_alias=_alias("num_hidden_layers", "n_layer"))
    num_attention_heads: HeadCount = Field(validation_alias=_alias("num_attention_heads", "n_head"))
    num_kv_heads: HeadCount | None = None
    multi_query: Flag = True
    new_decoder_architecture: Flag = False
    parallel_attn: Flag = True
    bias: Flag = False
    ffn_hidden_size: Width | None = None
    num_ln_in_parallel_attn: LayerCount | None = None
    alibi: Flag = False

    @property
    def width(self) -> int:
        return self.hidden_size

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
        ffn = DenseFfn(self.width, self.ffn_hidden_size or 4 * self.width, gated=False, activation="gelu", bias=self.bias)
        attention = self.mha(self.num_attention_heads, bias=self.bias, kv_heads=self.kv_heads())
        layer = Layer(attention, ffn, self.norms(), parallel=self.parallel_attn)
        return self.spec(layer, self.num_hidden_layers, self.layer_norm())


class OptConfig(LayerNormDecoder):
    """configuration_opt.py / modeling_opt.py: learned positions with 2 extra rows (the offset
    kept from fairseq); tokens embedded at word_embed_proj_dim and projected in and out when it
    differs from hidden; biases everywhere (enable_bias); a final LayerNorm only when the norms
    come before the sublayers (do_layer_norm_before)."""

    architecture = "OPT"
    hidden_size: Width
    ffn_dim: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    max_position_embeddings: PositionCount = 2048
    word_embed_proj_dim: Width | None = None
    do_layer_norm_before: Flag = True
    remove_final_layer_norm: Flag = Field(False, validation_alias=_alias("_remove_final_layer_norm"))
    enable_bias: Flag = True
    layer_norm_elementwise_affine: Flag = True
    activation_function: Name = "relu"

    position_offset: ClassVar[int] = 2

    @property
    def width(self) -> int:
        return self.hidden_size

    def norms(self, *names: str) -> tuple[tuple[str, Norm], ...]:
        # Without elementwise affine a LayerNorm has no parameters at all.
        return tuple((name, self.layer_norm()) for name in names) if self.layer_norm_elementwise_affine else ()

    def to_spec(self) -> ModelSpec:
        ffn = DenseFfn(self.width, self.ffn_dim, gated=False, activation=self.activation_function, bias=self.enable_bias)
        attention = self.mha(self.num_attention_heads, bias=self.enable_bias)
        layer = Layer(attention, ffn, self.norms("self_attn_layer_norm", "final_layer_norm"))
        embedding_dim = self.word_embed_proj_dim or self.width
        extras: tuple[Extra, ...] = ()
        if embedding_dim != self.width:
            extras = (
                Extra("other", "project_in", Linear(embedding_dim, self.width)),
                Extra("other", "project_out", Linear(self.width, embedding_dim)),
            )
        final = self.do_layer_norm_before and not self.remove_final_layer_norm and self.layer_norm_elementwise_affine
        return self.spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm() if final else None,
            position_embeddings=self.max_position_embeddings + self.position_offset,
            embedding_dim=embedding_dim,
            extras=extras,
        )

    @model_validator(mode="after")
    def _check_heads(self) -> "OptConfig":
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})")
        return self
