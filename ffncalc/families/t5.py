"""T5 and mT5: encoder-decoders with relative position buckets and no biases."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ACTIVATIONS, Flag, HeadCount, HFConfig, LayerCount, Name, Width
from ..spec import Attention, CheckpointExtra, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Norm, StoredTensor, names

SELF_ATTENTION = names(
    q="layer.0.SelfAttention.q",
    k="layer.0.SelfAttention.k",
    v="layer.0.SelfAttention.v",
    o="layer.0.SelfAttention.o",
    relative_position_bias="layer.0.SelfAttention.relative_attention_bias",
)
CROSS_ATTENTION = names(
    q="layer.1.EncDecAttention.q",
    k="layer.1.EncDecAttention.k",
    v="layer.1.EncDecAttention.v",
    o="layer.1.EncDecAttention.o",
)


def t5_ffn_names(sublayer: int, gated: bool):
    prefix = f"layer.{sublayer}.DenseReluDense."
    if gated:
        return names(gate=prefix + "wi_0", up=prefix + "wi_1", down=prefix + "wo")
    return names(up=prefix + "wi", down=prefix + "wo")


class T5Config(HFConfig):
    """configuration_t5.py / modeling_t5.py.

    No biases anywhere; RMS layer norms (weight only). Attention width is num_heads · d_kv. The
    first block of each stack holds the relative-position bias (buckets × heads).
    feed_forward_proj "relu" (T5) is wi → wo; "gated-gelu" (T5 v1.1, Flan-T5, mT5) is wi_0, wi_1 → wo.
    transformers 5 always ties the head to the shared embedding (tie_word_embeddings is read only to
    scale the decoder's output); checkpoints saved untied (v1.1, Flan-T5) still store lm_head.
    """

    architecture = "T5"
    config_class = "T5Config"
    default_model_class = "T5ForConditionalGeneration"
    undeclared_keys = frozenset({"tie_word_embeddings"})  # popped by __post_init__: the model always ties
    derived_defaults = {"num_decoder_layers": "num_layers"}

    vocab_size: Width = 32128
    d_model: Width = Field(512, validation_alias=AliasChoices("d_model", "hidden_size"))
    d_kv: Width = Field(64, validation_alias=AliasChoices("d_kv", "head_dim"))
    d_ff: Width = 2048
    num_layers: LayerCount = Field(6, validation_alias=AliasChoices("num_layers", "num_hidden_layers"))
    num_decoder_layers: LayerCount | None = None
    num_heads: HeadCount = Field(8, validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    relative_attention_num_buckets: Width = 32
    feed_forward_proj: Name = "relu"
    tie_word_embeddings: Flag = True  # read for the checkpoint's layout only: the model ties regardless

    @model_validator(mode="after")
    def _check_activation(self) -> T5Config:
        parts = self.feed_forward_proj.split("-")
        if (len(parts) > 1 and parts[0] != "gated") or len(parts) > 2 or parts[-1] not in ACTIVATIONS:
            raise ValueError(
                f"feed_forward_proj: {self.feed_forward_proj!r} is not 'gated-ACT' or 'ACT' with an activation "
                "transformers knows (e.g. 'gated-gelu', 'relu')"
            )
        return self

    def resolved(self, field: str):
        return self.decoder_layers if field == "num_decoder_layers" else super().resolved(field)

    def unused_fields(self) -> set[str]:
        return {"tie_word_embeddings"}  # the model ties whatever it says

    @property
    def decoder_layers(self) -> int:
        return self.num_decoder_layers or self.num_layers

    @property
    def gated(self) -> bool:
        return self.feed_forward_proj.startswith("gated-")

    def attention(self, attention_names, buckets: int = 0) -> Attention:
        d_kv, heads = self.d_kv, self.num_heads
        return Attention(self.d_model, heads, heads, d_kv, d_kv, attention_names, relative_position_buckets=buckets)

    def ffn(self, sublayer: int) -> DenseFfn:
        activation = self.feed_forward_proj.split("-")[-1]
        return DenseFfn(self.d_model, self.d_ff, self.gated, activation, t5_ffn_names(sublayer, self.gated))

    def stack(self, kind: Literal["encoder", "decoder"], count: int) -> tuple[Layer, ...]:
        norm = Norm("rmsnorm", self.d_model)
        name = f"{kind}.block.{{i}}"
        layers = []
        for index in range(count):
            buckets = self.relative_attention_num_buckets if index == 0 else 0
            attention = self.attention(SELF_ATTENTION, buckets)
            if kind == "encoder":
                norms = (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm))
                layers.append(Layer(name, attention, self.ffn(1), norms, stack="encoder"))
            else:
                norms = (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm), ("layer.2.layer_norm", norm))
                cross = self.attention(CROSS_ATTENTION)
                layers.append(Layer(name, attention, self.ffn(2), norms, cross_attention=cross, stack="decoder"))
        return tuple(layers)

    def to_spec(self) -> ModelSpec:
        norm = Norm("rmsnorm", self.d_model)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", self.num_layers) + self.stack("decoder", self.decoder_layers),
            final_norm=norm,  # the decoder's final_layer_norm
            tie_word_embeddings=True,
            names=ModelNames("shared", "decoder.final_layer_norm", base_model_prefix=""),
            extras=(Extra("norm", "encoder.final_layer_norm", norm, "not_generating"),),
            checkpoint_extras=self.stored_extras(),
        )

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        width = (self.vocab_size, self.d_model)
        extras = [
            CheckpointExtra(
                name="decoder cross-attention relative_attention_bias",
                reason=(
                    f"{self.relative_attention_num_buckets} buckets × {self.num_heads} heads, stored by the original "
                    "T5 checkpoints (t5-small, -base, -large) though no module uses it"
                ),
                tensors=(
                    StoredTensor(
                        "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",
                        (self.relative_attention_num_buckets, self.num_heads),
                    ),
                ),
                likely=self.feed_forward_proj == "relu",  # the original checkpoints; the v1.1 family has none
            ),
            CheckpointExtra(
                name="untied lm_head",
                reason=(
                    f"{width[0]:,} × {width[1]:,}: saved untied (tie_word_embeddings false), while transformers 5 "
                    "ties T5's head to the shared embedding"
                ),
                tensors=(StoredTensor("lm_head.weight", width),),
                likely=not self.tie_word_embeddings,
            ),
            CheckpointExtra(
                name="tied copies of the shared embedding",
                reason="encoder.embed_tokens and decoder.embed_tokens are the shared table, stored again by some checkpoints",
                tensors=(
                    StoredTensor("encoder.embed_tokens.weight", width),
                    StoredTensor("decoder.embed_tokens.weight", width),
                ),
                likely=False,
            ),
        ]
        return tuple(extras)

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the "
            "encoder output's keys and values once); the context is both the decoder's length and the encoder's."
        ]


class MT5Config(T5Config):
    """configuration_mt5.py: T5's layout with mT5's defaults (gated-gelu, a 250,112-token vocabulary)."""

    architecture = "mT5"
    config_class = "MT5Config"
    default_model_class = "MT5ForConditionalGeneration"
    vocab_size: Width = 250112
    d_ff: Width = 1024
    num_layers: LayerCount = Field(8, validation_alias=AliasChoices("num_layers", "num_hidden_layers"))
    num_heads: HeadCount = Field(6, validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    feed_forward_proj: Name = "gated-gelu"
