"""Useful Sensors' Moonshine: a speech encoder that reads the raw waveform (three convolutions, then pre-LN layers
with partial rotary positions) and a text decoder with cross-attention, in Llama's module names."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, derives
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    ModelNames,
    ModelSpec,
    Norm,
    Norms,
    Runs,
    names,
)
from .blocks import check_padding_row
from .registry import family

Kind = Literal["model", "generation"]
SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
CROSS_ATTENTION = names(
    q="encoder_attn.q_proj", k="encoder_attn.k_proj", v="encoder_attn.v_proj", o="encoder_attn.o_proj"
)
ENCODER_MLP = names(up="mlp.fc1", down="mlp.fc2")
DECODER_MLP = names(gate="mlp.fc1", up="mlp.fc1", down="mlp.fc2")  # fc1 emits both halves (chunked in two)


@family(
    "moonshine",
    transformers="MoonshineConfig",
    architecture="Moonshine",
    model_class="MoonshineForConditionalGeneration",
)
class MoonshineConfig(HFConfig):
    """configuration_moonshine.py / modeling_moonshine.py (transformers 5.24).

    Encoder: conv1 (1 → hidden, 127 taps, stride 64, no bias), conv2 (hidden → 2 · hidden, 7 taps, stride 3) and
    conv3 (2 · hidden → hidden, 3 taps, stride 2) with biases, a GroupNorm of one group (weight and bias), layers of
    self-attention and a plain MLP (fc1, fc2 with biases, encoder_hidden_act), a final LayerNorm. Decoder: a token
    table, layers of self-attention, cross-attention (encoder_attn) and a gated MLP (fc1 hidden → 2 · intermediate
    whose halves are the value and the gate, fc2; biases), a final LayerNorm; every LayerNorm without bias. q, k and
    v have biases with attention_bias, o_proj never. The head (proj_out) is tied to the token table unless
    tie_word_embeddings is false.

    MoonshineAttention writes its head counts into the config it shares with every layer, where attribute_map sends
    them to decoder_num_attention_heads and decoder_num_key_value_heads: the encoder is built first, so the decoder
    is built with the encoder's head counts, whatever the decoder's fields say (counted as transformers builds it).
    """

    informational_fields = frozenset({"pad_token_id", "max_position_embeddings", "pad_head_dim_to_multiple_of"})
    class_prefix: ClassVar[str] = "Moonshine"
    classes: ClassVar[dict[str, Kind]] = {"Model": "model", "ForConditionalGeneration": "generation"}

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    encoder_num_hidden_layers: LayerCount
    decoder_num_hidden_layers: LayerCount
    encoder_num_attention_heads: HeadCount
    decoder_num_attention_heads: HeadCount
    encoder_num_key_value_heads: HeadCount | None
    decoder_num_key_value_heads: HeadCount | None
    encoder_hidden_act: Name
    decoder_hidden_act: Name
    max_position_embeddings: PositionCount
    attention_bias: Flag
    pad_head_dim_to_multiple_of: Width | None  # pads q, k, v inside the attention only: no weights
    pad_token_id: Annotated[int | None, Field(strict=True)]
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> MoonshineConfig:
        heads, kv_heads = self.encoder_num_attention_heads, self.encoder_kv_heads
        if self.hidden_size % heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of encoder_num_attention_heads ({heads})"
            )
        if heads % kv_heads:
            raise ValueError(
                f"encoder_num_attention_heads ({heads}) is not a multiple of encoder_num_key_value_heads ({kv_heads})"
            )
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    @property
    @derives("encoder_num_key_value_heads", "encoder_num_attention_heads")
    def encoder_kv_heads(self) -> int:
        return self.encoder_num_key_value_heads or self.encoder_num_attention_heads

    @property
    @derives("decoder_num_key_value_heads", "decoder_num_attention_heads")
    def decoder_kv_heads(self) -> int:
        return self.decoder_num_key_value_heads or self.decoder_num_attention_heads

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    def unused_fields(self) -> set[str]:
        """The decoder's head counts: transformers builds the decoder with the encoder's (see the class)."""
        return {"decoder_num_attention_heads", "decoder_num_key_value_heads"}

    def notes(self) -> list[str]:
        notes = [
            "Encoder-decoder over the raw 16 kHz waveform: per generated token only the decoder runs (its "
            "cross-attention projects the encoder output's keys and values once); the encoder's length follows the "
            "clip (about 41 positions a second), so the context stands for it too. What a clip costs (`audio`) is "
            "not counted: Moonshine reads no fixed window."
        ]
        decoder = (
            self.decoder_num_attention_heads,
            self.decoder_kv_heads,
        )
        if decoder != (self.encoder_num_attention_heads, self.encoder_kv_heads):
            notes.append(
                f"The decoder is built with the encoder's {self.encoder_num_attention_heads} heads and "
                f"{self.encoder_kv_heads} key-value heads, not its own {decoder[0]} and {decoder[1]}: transformers "
                "5.24's MoonshineAttention overwrites the decoder's head counts in the shared config while the "
                "encoder is built."
            )
        if self.architectures and self.model_class() != self.architectures[0]:
            notes.append(
                f"{self.architectures[0]} is not a Moonshine class ffncalc knows; counted as {self.model_class()}."
            )
        return notes

    def attention(self, attention_names) -> Attention:
        """q, k, v (biased with attention_bias) and o_proj (never biased), with the encoder's head counts."""
        heads, kv_heads = self.encoder_num_attention_heads, self.encoder_kv_heads
        width = self.hidden_size // heads
        bias = self.attention_bias
        return Attention(self.hidden_size, heads, kv_heads, width, width, attention_names, bias, bias, bias, False)

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        norm = Norm("layernorm", self.hidden_size)
        name = f"{root}{kind}.layers.{{i}}"
        d, inner = self.hidden_size, self.intermediate_size
        if kind == "encoder":
            ffn = DenseFfn(d, inner, False, self.encoder_hidden_act, ENCODER_MLP, bias=True)
            norms: Norms = (("input_layernorm", norm), ("post_attention_layernorm", norm))
            layer = Layer(name, self.attention(SELF_ATTENTION), ffn, norms, stack="encoder")
            return (layer,) * self.encoder_num_hidden_layers
        ffn = DenseFfn(d, inner, True, self.decoder_hidden_act, DECODER_MLP, bias=True)
        norms = (("input_layernorm", norm), ("post_attention_layernorm", norm), ("final_layernorm", norm))
        cross = self.attention(CROSS_ATTENTION)
        layer = Layer(name, self.attention(SELF_ATTENTION), ffn, norms, cross_attention=cross, stack="decoder")
        return (layer,) * self.decoder_num_hidden_layers

    def encoder_extras(self, root: str) -> list[Extra]:
        """The convolutions over the waveform and the GroupNorm after conv1, and the final LayerNorm: none runs for
        a generated token."""
        d = self.hidden_size
        runs: Runs = "not_generating"
        prefix = f"{root}encoder."
        return [
            Extra("other", prefix + "conv1.weight", LearnedTensor((d, 1, 127), matmul=True), runs),
            Extra("other", prefix + "conv2.weight", LearnedTensor((2 * d, d, 7), matmul=True), runs),
            Extra("other", prefix + "conv2.bias", LearnedTensor((2 * d,)), runs),
            Extra("other", prefix + "conv3.weight", LearnedTensor((d, 2 * d, 3), matmul=True), runs),
            Extra("other", prefix + "conv3.bias", LearnedTensor((d,)), runs),
            Extra("norm", prefix + "groupnorm", Norm("layernorm", d, bias=True), runs),
            Extra("norm", prefix + "layer_norm", Norm("layernorm", d), runs),
        ]

    def to_spec(self) -> ModelSpec:
        kind = self.classes[self.model_class().removeprefix(self.class_prefix)]
        root = "" if kind == "model" else "model."
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", root) + self.stack("decoder", root),
            final_norm=Norm("layernorm", self.hidden_size),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.embed_tokens", f"{root}decoder.norm", lm_head="proj_out", base_model_prefix="model"
            ),
            lm_head=kind != "model",
            extras=tuple(self.encoder_extras(root)),
        )
