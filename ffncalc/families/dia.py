"""Nari Labs' Dia (modeling_dia.py, transformers 5.24): text-to-speech as an encoder-decoder of Llama-style layers, a
byte-level text encoder and a decoder over num_channels streams of audio codes that shares one token table and one
output projection among them."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InvalidConfigError
from ..schema import HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, read_block
from ..spec import Attention, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Names, Norm, Table, names
from .registry import family

Kind = Literal["model", "generation"]
DIA_MLP = names(gate="mlp.gate_up_proj", up="mlp.gate_up_proj", down="mlp.down_proj")  # gate first, then up
SELF_ATTENTION = names(
    q="self_attention.q_proj", k="self_attention.k_proj", v="self_attention.v_proj", o="self_attention.o_proj"
)
CROSS_ATTENTION = names(
    q="cross_attention.q_proj", k="cross_attention.k_proj", v="cross_attention.v_proj", o="cross_attention.o_proj"
)


class DiaStack(BaseModel):
    """The fields DiaEncoderConfig and DiaDecoderConfig share (transformers 5.24): the encoder's defaults."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    num_hidden_layers: LayerCount = 12
    hidden_size: Width = 1024
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount = 16
    head_dim: Width = 128
    intermediate_size: Width = 4096
    vocab_size: Width = 256
    hidden_act: Name = "silu"
    max_position_embeddings: PositionCount = 1024

    @model_validator(mode="after")
    def _check_heads(self) -> DiaStack:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) is not a multiple of num_key_value_heads "
                f"({self.num_key_value_heads})"
            )
        return self

    def attention(self, attention_names: Names) -> Attention:
        """q heads × head_dim wide (not hidden_size), k and v kv heads × head_dim, o back to hidden; no biases."""
        head = self.head_dim
        return Attention(
            self.hidden_size, self.num_attention_heads, self.num_key_value_heads, head, head, attention_names
        )

    def mlp(self) -> DenseFfn:
        """DiaMLP: gate_up_proj hidden → 2 · intermediate (gate, then up), down_proj back; no biases."""
        return DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, DIA_MLP)

    def norm(self) -> Norm:
        return Norm("rmsnorm", self.hidden_size)


class DiaDecoderStack(DiaStack):
    """DiaDecoderConfig's fields (transformers 5.24)."""

    num_hidden_layers: LayerCount = 18
    hidden_size: Width = 2048
    intermediate_size: Width = 8192
    num_key_value_heads: HeadCount = 4
    cross_num_attention_heads: HeadCount = 16
    cross_head_dim: Width = 128
    cross_num_key_value_heads: HeadCount = 16
    cross_hidden_size: Width = 1024
    vocab_size: Width = 1028
    num_channels: Width = 9
    max_position_embeddings: PositionCount = 3072

    def cross_attention(self) -> Attention:
        """DiaCrossAttention: q hidden → cross heads × cross_head_dim, k and v cross_hidden_size → cross kv heads ×
        cross_head_dim, o back to hidden; no biases."""
        head = self.cross_head_dim
        return Attention(
            self.hidden_size, self.cross_num_attention_heads, self.cross_num_key_value_heads, head, head,
            CROSS_ATTENTION, kv_input_size=self.cross_hidden_size,
        )  # fmt: skip


@family("dia", transformers="DiaConfig", architecture="Dia", model_class="DiaForConditionalGeneration")
class DiaConfig(HFConfig):
    """configuration_dia.py / modeling_dia.py (DiaForConditionalGeneration, the speech-seq2seq mapping's class, and
    DiaModel). Encoder (encoder_config): a byte table (vocab_size 256), layers of bidirectional self_attention and
    DiaMLP with RMSNorms pre_sa_norm and post_sa_norm, a final norm. Decoder (decoder_config): one table of
    num_channels · vocab_size rows (each step sums a row per channel), layers of causal GQA self_attention,
    cross_attention over the encoder's output (keys and values read cross_hidden_size) and DiaMLP with RMSNorms
    pre_sa_norm, pre_ca_norm and pre_mlp_norm, a final norm. Rotary positions, no biases anywhere. The head,
    logits_dense, maps the decoder's width to num_channels · vocab_size logits (every channel's at each step), never
    tied. delay_pattern must have num_channels entries (DiaConfig refuses otherwise)."""

    classes: ClassVar[dict[str, Kind]] = {"DiaModel": "model", "DiaForConditionalGeneration": "generation"}
    informational_fields = frozenset({"pad_token_id", "bos_token_id", "eos_token_id", "use_cache", "norm_eps"})

    encoder_config: dict[str, Any] | None
    decoder_config: dict[str, Any] | None
    delay_pattern: Annotated[list[int] | None, Field(max_length=1 << 12)]

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named in self.classes else self.default_model_class

    @cached_property
    def encoder(self) -> DiaStack:
        return read_block(DiaStack, self.encoder_config or {}, "encoder_config")

    @cached_property
    def decoder(self) -> DiaDecoderStack:
        decoder = read_block(DiaDecoderStack, self.decoder_config or {}, "decoder_config")
        delays = len(self.delay_pattern) if self.delay_pattern is not None else 9  # DiaConfig's default: 9 delays
        if delays != decoder.num_channels:
            raise InvalidConfigError(
                f"delay_pattern: {delays} entries, but decoder_config.num_channels is {decoder.num_channels}; DiaConfig "
                "requires one delay per channel"
            )
        return decoder

    def max_context(self) -> int | None:
        """The decoder's max_position_embeddings (its rotary positions are computed, so a longer context builds)."""
        return self.decoder.max_position_embeddings

    def validate_nested(self) -> None:
        self.encoder  # noqa: B018 - each block, or an error naming its field
        self.decoder  # noqa: B018

    def to_spec(self) -> ModelSpec:
        kind = self.classes[self.model_class()]
        root = "" if kind == "model" else "model."
        encoder, decoder = self.encoder, self.decoder
        encoder_layer = Layer(
            f"{root}encoder.layers.{{i}}",
            encoder.attention(SELF_ATTENTION),
            encoder.mlp(),
            (("pre_sa_norm", encoder.norm()), ("post_sa_norm", encoder.norm())),
            stack="encoder",
        )
        decoder_layer = Layer(
            f"{root}decoder.layers.{{i}}",
            decoder.attention(SELF_ATTENTION),
            decoder.mlp(),
            (("pre_sa_norm", decoder.norm()), ("pre_ca_norm", decoder.norm()), ("pre_mlp_norm", decoder.norm())),
            cross_attention=decoder.cross_attention(),
        )
        extras = (
            Extra(
                "embedding",
                f"{root}encoder.embedding",
                Table(encoder.vocab_size, encoder.hidden_size),
                "not_generating",
            ),
            Extra("norm", f"{root}encoder.norm", encoder.norm(), "not_generating"),
        )
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=decoder.hidden_size,
            vocab_size=decoder.num_channels * decoder.vocab_size,
            layers=(encoder_layer,) * encoder.num_hidden_layers + (decoder_layer,) * decoder.num_hidden_layers,
            final_norm=decoder.norm(),
            tie_word_embeddings=False,
            names=ModelNames(f"{root}decoder.embeddings.embed", f"{root}decoder.norm", lm_head="logits_dense"),
            lm_head=kind == "generation",
            extras=extras,
        )

    def notes(self) -> list[str]:
        notes = [
            "Encoder-decoder: per generated step only the decoder runs, one step a frame of all "
            f"{self.decoder.num_channels} audio channels (it sums a table row per channel, and logits_dense scores "
            "every channel's codes at once); the encoder reads the text's bytes, and the context stands for both."
        ]
        if self.architectures and self.architectures[0] != self.model_class():
            notes.append(f"{self.architectures[0]} is not a Dia class ffncalc knows; counted as {self.model_class()}.")
        return notes
