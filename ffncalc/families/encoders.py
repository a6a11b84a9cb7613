"""Encoders and encoder-decoders: BERT (pre-training checkpoint) and T5 / mT5.

Their layers carry ``stack="encoder"`` or ``"decoder"``; T5's decoder layers add cross-attention
(its own component). Per generated token, an encoder-decoder runs its decoder stack only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import AliasChoices, Field

from ..schema import Flag, HFConfig, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, CheckpointExtra, DenseFfn, Extra, Layer, Linear, ModelSpec, Norm, Table


class BertConfig(HFConfig):
    """configuration_bert.py / modeling_bert.py, as BertForPreTraining (what bert-base-uncased stores).

    Embeddings: word, position and token-type tables and a LayerNorm. Layers (post-LN): q, k, v
    and output dense with biases, then LayerNorm; intermediate and output dense with biases, then
    LayerNorm. Heads, all counted and each shown: the pooler (dense + tanh), the masked-LM head
    (a dense transform, a LayerNorm, and a decoder tied to the word table but with its own bias)
    and the next-sentence head (dense to 2).
    """

    architecture = "BERT"
    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    max_position_embeddings: PositionCount = 512
    type_vocab_size: Width = 2
    hidden_act: Name = "gelu"

    def to_spec(self) -> ModelSpec:
        hidden = self.hidden_size
        attention = Attention.uniform(hidden, self.num_attention_heads, bias=True)
        ffn = DenseFfn(hidden, self.intermediate_size, gated=False, activation=self.hidden_act, bias=True)
        norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(attention, ffn, (("attention.output.LayerNorm", norm), ("output.LayerNorm", norm)), stack="encoder")
        extras = (
            Extra("embedding", "token_type_embeddings", Table(self.type_vocab_size, hidden)),
            Extra("norm", "embeddings.LayerNorm", norm),
            Extra("other", "pooler", Linear(hidden, hidden, bias=True), per_token=False),
            Extra("lm_head", "mlm_transform", Linear(hidden, hidden, bias=True)),
            Extra("norm", "mlm_transform.LayerNorm", norm),
            Extra("other", "next_sentence_head", Linear(hidden, 2, bias=True), per_token=False),
        )
        return self.make_spec(
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=True,
            position_embeddings=self.max_position_embeddings,
            lm_head_bias=True,
            extras=extras,
            notes=(
                "BERT as pre-trained (BertForPreTraining): the pooler, the masked-LM head and the next-sentence "
                "head are all counted, each on its own line; BertModel alone leaves out the two heads.",
            ),
        )


class T5Config(HFConfig):
    """configuration_t5.py / modeling_t5.py (and mT5, the same layout).

    No biases anywhere; RMS layer norms (weight only). Attention width is num_heads · d_kv.
    The first block of each stack holds the relative-position bias (buckets × heads).
    feed_forward_proj "relu" (T5) is wi → wo; "gated-gelu" (T5 v1.1, Flan-T5, mT5) is wi_0, wi_1 → wo.
    """

    architecture = "T5"
    vocab_size: Width
    d_model: Width = Field(validation_alias=AliasChoices("d_model", "hidden_size"))
    d_kv: Width = 64
    d_ff: Width
    num_layers: LayerCount = Field(validation_alias=AliasChoices("num_layers", "num_hidden_layers"))
    num_decoder_layers: LayerCount | None = None
    num_heads: HeadCount = Field(validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    relative_attention_num_buckets: Width = 32
    feed_forward_proj: Name = "relu"
    tie_word_embeddings: Flag = True

    def attention(self, buckets: int = 0) -> Attention:
        return replace(
            Attention.uniform(self.d_model, self.num_heads, bias=False, head_dim=self.d_kv),
            relative_position_buckets=buckets,
        )

    def ffn(self) -> DenseFfn:
        gated = self.feed_forward_proj.startswith("gated-")
        activation = self.feed_forward_proj.removeprefix("gated-")
        return DenseFfn(self.d_model, self.d_ff, gated=gated, activation=activation)

    def stack(self, kind: Literal["encoder", "decoder"], count: int) -> tuple[Layer, ...]:
        norm = Norm("rmsnorm", self.d_model)
        layers = []
        for index in range(count):
            buckets = self.relative_attention_num_buckets if index == 0 else 0
            if kind == "encoder":
                layers.append(Layer(self.attention(buckets), self.ffn(), (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm)), stack="encoder"))
            else:
                norms = (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm), ("layer.2.layer_norm", norm))
                layers.append(Layer(self.attention(buckets), self.ffn(), norms, cross_attention=self.attention(), stack="decoder"))
        return tuple(layers)

    def to_spec(self) -> ModelSpec:
        decoder_layers = self.num_decoder_layers or self.num_layers
        norm = Norm("rmsnorm", self.d_model)
        stored_bias = CheckpointExtra(
            name="decoder cross-attention relative_attention_bias",
            elements=self.relative_attention_num_buckets * self.num_heads,
            reason=(
                f"{self.relative_attention_num_buckets} buckets × {self.num_heads} heads, stored by the original T5 "
                "checkpoints (t5-small, -base, -large) though no module uses it"
            ),
        )
        # The original T5 checkpoints (ReLU FFN) store it; the v1.1 family (Flan-T5, mT5) does not.
        original_t5 = self.feed_forward_proj == "relu"
        return self.make_spec(
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", self.num_layers) + self.stack("decoder", decoder_layers),
            final_norm=norm,  # the decoder's final_layer_norm
            tie_word_embeddings=self.tie_word_embeddings,
            extras=(Extra("norm", "encoder.final_layer_norm", norm, per_token=False),),
            checkpoint_extras=(stored_bias,) if original_t5 else (),
            notes=(
                "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the "
                "encoder output's keys and values once); the context is both the decoder's length and the "
                "encoder's.",
            ),
        )
