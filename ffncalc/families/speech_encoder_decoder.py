"""SpeechEncoderDecoderModel: a speech encoder (Wav2Vec2 by default) and a text decoder with cross-attention, each
configured by a block of its own (``encoder``, ``decoder``), composed as transformers composes them. The decoder is
read as EncoderDecoderModel's is; the encoder is laid out here."""

from __future__ import annotations

from functools import cached_property
from math import prod
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..errors import InvalidConfigError
from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, Width, read_block
from ..spec import Attention, DenseFfn, Extra, Layer, LearnedTensor, Linear, ModelSpec, Norm, Runs, names
from ..values import replace
from .encoder_decoder import EncoderDecoderConfig
from .multimodal import nest
from .registry import family, tower
from .towers import Tower, TowerConfig

WAV2VEC2_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.out_proj")
WAV2VEC2_FEED_FORWARD = names(up="feed_forward.intermediate_dense", down="feed_forward.output_dense")
Convolutions = Annotated[list[Width], Field(min_length=1, max_length=64)]


@tower("wav2vec2", transformers="Wav2Vec2Config")
class Wav2Vec2EncoderConfig(TowerConfig):
    """configuration_wav2vec2.py / modeling_wav2vec2.py (Wav2Vec2Model, as AutoModel builds it). feature_extractor:
    convolutions over raw samples (conv_layers: conv_dim, conv_kernel, conv_stride, biased where conv_bias; with
    feat_extract_norm "group" the first layer's GroupNorm of one group per channel, with "layer" a LayerNorm after
    every one); feature_projection (a LayerNorm of the last conv_dim, projection → hidden_size with bias);
    masked_spec_embed (hidden_size; only where mask_time_prob or mask_feature_prob is above 0); the encoder:
    pos_conv_embed (a convolution of num_conv_pos_embeddings taps in num_conv_pos_embedding_groups groups with bias,
    its weight normalised: original0 [1, 1, taps] and original1 [hidden, hidden / groups, taps]), a LayerNorm and
    num_hidden_layers layers (attention q, k, v, out_proj with biases, layer_norm, feed_forward intermediate_dense and
    output_dense with biases, final_layer_norm), post-LN, or pre-LN with do_stable_layer_norm (the same parameters).
    Its length follows the clip (one position per Π conv_stride samples). add_adapter (strided convolutions after the
    layers) is not laid out."""

    informational_fields = frozenset({"feat_extract_activation", "conv_stride", "do_stable_layer_norm"})

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    feat_extract_norm: Literal["group", "layer"]
    feat_extract_activation: Name
    conv_dim: Convolutions
    conv_stride: Convolutions
    conv_kernel: Convolutions
    conv_bias: Flag
    num_conv_pos_embeddings: Width
    num_conv_pos_embedding_groups: Width
    do_stable_layer_norm: Flag
    mask_time_prob: Annotated[float, Field(ge=0, le=1)]
    mask_feature_prob: Annotated[float, Field(ge=0, le=1)]
    add_adapter: Flag
    output_hidden_size: Width | None

    @model_validator(mode="after")
    def _check_shapes(self) -> Wav2Vec2EncoderConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); Wav2Vec2Attention refuses it"
            )
        if not len(self.conv_dim) == len(self.conv_stride) == len(self.conv_kernel):
            raise ValueError(
                f"conv_dim ({len(self.conv_dim)}), conv_stride ({len(self.conv_stride)}) and conv_kernel "
                f"({len(self.conv_kernel)}) must have as many entries; Wav2Vec2Config refuses them"
            )
        if self.hidden_size % self.num_conv_pos_embedding_groups:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_conv_pos_embedding_groups "
                f"({self.num_conv_pos_embedding_groups}); torch refuses the grouped convolution"
            )
        if self.add_adapter:
            raise ValueError(
                "add_adapter true: Wav2Vec2Model's adapter (strided convolutions after the layers, output_hidden_size "
                "wide) is not laid out"
            )
        return self

    def uncounted(self) -> str | None:
        return "ffncalc lays out Wav2Vec2 as a speech encoder-decoder's encoder, not as a tower yet"

    def tower(self, prefix: str) -> Tower:  # pragma: no cover - uncounted as a tower
        raise NotImplementedError

    @property
    def output_width(self) -> int:
        """What SpeechEncoderDecoderModel compares with the decoder's width (output_hidden_size, else hidden_size)."""
        return self.output_hidden_size or self.hidden_size

    def layer_norm(self, width: int | None = None) -> Norm:
        return Norm("layernorm", width or self.hidden_size, bias=True)

    def encoder(self, prefix: str) -> tuple[tuple[Layer, ...], tuple[Extra, ...]]:
        """The layers (the "encoder" stack, run once over the clip's positions) and the modules outside them, which
        read the clip, never a generated token (the context stands for the clip's positions)."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, WAV2VEC2_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, WAV2VEC2_FEED_FORWARD, bias=True)
        norms = (("layer_norm", self.layer_norm()), ("final_layer_norm", self.layer_norm()))
        layer = Layer(prefix + "encoder.layers.{i}", attention, ffn, norms, stack="encoder")
        runs: Runs = "not_generating"
        modules: list[tuple[str, LearnedTensor | Linear | Norm]] = []
        before = 1
        for index, (width, kernel) in enumerate(zip(self.conv_dim, self.conv_kernel, strict=True)):
            conv = f"{prefix}feature_extractor.conv_layers.{index}."
            modules.append((conv + "conv.weight", LearnedTensor((width, before, kernel), matmul=True)))
            if self.conv_bias:
                modules.append((conv + "conv.bias", LearnedTensor((width,))))
            if self.feat_extract_norm == "layer" or index == 0:
                modules.append((conv + "layer_norm", self.layer_norm(width)))  # GroupNorm(width, width): as many
            before = width
        modules += [
            (prefix + "feature_projection.layer_norm", self.layer_norm(before)),
            (prefix + "feature_projection.projection", Linear(before, hidden, True)),
        ]
        if self.mask_time_prob > 0 or self.mask_feature_prob > 0:
            modules.append((prefix + "masked_spec_embed", LearnedTensor((hidden,))))
        taps, groups = self.num_conv_pos_embeddings, self.num_conv_pos_embedding_groups
        weight = prefix + "encoder.pos_conv_embed.conv.parametrizations.weight."
        modules += [
            (weight + "original0", LearnedTensor((1, 1, taps))),
            (weight + "original1", LearnedTensor((hidden, hidden // groups, taps), matmul=True)),
            (prefix + "encoder.pos_conv_embed.conv.bias", LearnedTensor((hidden,))),
            (prefix + "encoder.layer_norm", self.layer_norm()),
        ]
        extras = tuple(
            Extra("norm" if isinstance(module, Norm) else "other", name, module, runs) for name, module in modules
        )
        return (layer,) * self.num_hidden_layers, extras


@family(
    "speech-encoder-decoder",
    transformers="SpeechEncoderDecoderConfig",
    architecture="Speech encoder-decoder",
    model_class="SpeechEncoderDecoderModel",
)
class SpeechEncoderDecoderConfig(EncoderDecoderConfig):
    """configuration_speech_encoder_decoder.py / modeling_speech_encoder_decoder.py (transformers 5.24).

    The encoder is what AutoModel builds from the ``encoder`` block (Wav2Vec2Model by default, under encoder.*), the
    decoder what AutoModelForCausalLM builds from the ``decoder`` block (under decoder.*: BERT's LMHeadModel with
    is_decoder and add_cross_attention by default), read as EncoderDecoderModel's decoder is; the model sets its own
    tie_word_embeddings false, and the decoder ties its head as its block says. enc_to_dec_proj (biased, from the
    encoder's hidden_size) maps the encoder's output to the decoder's width where the encoder's output_hidden_size
    differs from it and the decoder names no cross_attention_hidden_size. ffncalc lays out Wav2Vec2 encoders (HuBERT,
    Speech2Text's encoder … are refused) and the decoders of BERT's lineage."""

    @cached_property
    def speech_encoder(self) -> Wav2Vec2EncoderConfig:
        from . import adapter_for

        raw = {"model_type": "wav2vec2"} if self.encoder is None else dict(self.encoder)
        model_type = raw.get("model_type")
        adapter = adapter_for(model_type, "towers") if isinstance(model_type, str) else None
        if adapter is None or not issubclass(adapter, Wav2Vec2EncoderConfig):
            raise InvalidConfigError(
                f"encoder.model_type: {model_type!r} is not one ffncalc composes; it lays out Wav2Vec2 speech "
                "encoders (wav2vec2) only"
            )
        return read_block(adapter, raw, "encoder")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder": self.speech_encoder, "decoder": self.decoder_block}

    def notes(self) -> list[str]:
        return [
            "Speech encoder-decoder: the encoder runs once over the clip, its convolutions over the raw samples (one "
            "position per "
            f"{prod(self.speech_encoder.conv_stride):,} samples), which ffncalc does not count, and its layers over "
            "the positions they leave, for which the context stands; per generated token only the decoder runs (its "
            "cross-attention projects the encoder output's keys and values once).",
            *(f"decoder: {note}" for note in self.decoder_block.notes()),
        ]

    def projection(self, encoder_width: int, decoder_width: int) -> list[Extra]:
        """enc_to_dec_proj where the encoder's output_hidden_size differs from the decoder's width (it reads the
        encoder's hidden_size) and the decoder names no cross_attention_hidden_size."""
        named = (self.decoder or {}).get("cross_attention_hidden_size")
        if self.speech_encoder.output_width == decoder_width or named is not None:
            return []
        return [Extra("other", "enc_to_dec_proj", Linear(encoder_width, decoder_width, bias=True), "once_per_input")]

    def to_spec(self) -> ModelSpec:
        speech = self.speech_encoder
        layers, extras = speech.encoder("encoder.")
        decoder = nest(self.decoder_block.to_spec(), "decoder.")
        named = (self.decoder or {}).get("cross_attention_hidden_size")
        if named is not None and named != speech.hidden_size:
            raise InvalidConfigError(
                f"decoder.cross_attention_hidden_size ({named}) must be the encoder's hidden_size "
                f"({speech.hidden_size}), as SpeechEncoderDecoderModel requires"
            )
        return replace(
            decoder,
            model_type=self.model_type,
            layers=layers + tuple(replace(layer, stack="decoder") for layer in decoder.layers),
            extras=extras + tuple(self.projection(speech.hidden_size, decoder.hidden_size)) + decoder.extras,
        )
