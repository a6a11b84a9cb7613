"""Microsoft's SpeechT5 as its speech-to-text class (modeling_speecht5.py, transformers 5.24): a Wav2Vec2-style speech
prenet over raw samples, an encoder whose scores add relative-distance keys, and a text decoder."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    Runs,
    Table,
    names,
)
from .blocks import check_heads_divide, check_padding_row
from .registry import family

ENCODER_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.out_proj")
SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
CROSS_ATTENTION = names(
    q="encoder_attn.q_proj", k="encoder_attn.k_proj", v="encoder_attn.v_proj", o="encoder_attn.out_proj"
)
FEED_FORWARD = names(up="feed_forward.intermediate_dense", down="feed_forward.output_dense")


@family("speecht5", transformers="SpeechT5Config", architecture="SpeechT5", model_class="SpeechT5ForSpeechToText")
class SpeechT5Config(HFConfig):
    """configuration_speecht5.py / modeling_speecht5.py (SpeechT5ForSpeechToText, the speech-seq2seq mapping's class).

    Speech prenet (speecht5.encoder.prenet): a Wav2Vec2 feature encoder over raw samples (conv_layers: conv_dim,
    conv_kernel, conv_stride, biased where conv_bias; with feat_extract_norm "group" the first layer's GroupNorm of
    one group per channel, with "layer" a LayerNorm after every one), feature_projection (a LayerNorm of the last
    conv_dim, projection → hidden with bias), masked_spec_embed (hidden; only where mask_time_prob or
    mask_feature_prob is above 0), pos_conv_embed (a convolution of num_conv_pos_embeddings taps in
    num_conv_pos_embedding_groups groups with bias, its weight normalised: original0 [1, 1, taps] and original1
    [hidden, hidden / groups, taps]); its sinusoidal positions are an unsaved buffer. Encoder (wrapped_encoder): a
    LayerNorm, post-LN layers (attention q, k, v, out_proj with biases, layer_norm, feed_forward intermediate_dense
    and output_dense with biases, final_layer_norm) and embed_positions.pe_k, 2 · encoder_max_relative_position rows of
    head_dim: every score adds the query times the row of the key's distance (rel_pos_bias). Decoder: the text prenet's
    embed_tokens (its sinusoidal positions a buffer), post-LN layers with cross-attention (encoder_attn), no final
    norm; text_decoder_postnet.lm_head (no bias) tied to embed_tokens unless tie_word_embeddings is false. The
    encoder's length follows the clip (one position per Π conv_stride samples): the context stands for it."""

    informational_fields = frozenset({"pad_token_id", "feat_extract_activation", "max_text_positions"})

    vocab_size: Width
    hidden_size: Width
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    encoder_ffn_dim: Width
    decoder_layers: LayerCount
    decoder_ffn_dim: Width
    decoder_attention_heads: HeadCount
    hidden_act: Name
    feat_extract_norm: Literal["group", "layer"]
    conv_dim: Annotated[list[Width], Field(min_length=1, max_length=64)]
    conv_stride: Annotated[list[Width], Field(min_length=1, max_length=64)]
    conv_kernel: Annotated[list[Width], Field(min_length=1, max_length=64)]
    conv_bias: Flag
    num_conv_pos_embeddings: Width
    num_conv_pos_embedding_groups: Width
    mask_time_prob: Annotated[float, Field(ge=0, le=1)]
    mask_feature_prob: Annotated[float, Field(ge=0, le=1)]
    encoder_max_relative_position: Width
    max_speech_positions: PositionCount
    max_text_positions: PositionCount
    pad_token_id: Annotated[int | None, Field(strict=True)]  # the token table's padding row: it must be a row of it
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> SpeechT5Config:
        check_heads_divide(self, "hidden_size")
        if not len(self.conv_dim) == len(self.conv_stride) == len(self.conv_kernel):
            raise ValueError(
                f"conv_dim ({len(self.conv_dim)}), conv_stride ({len(self.conv_stride)}) and conv_kernel "
                f"({len(self.conv_kernel)}) must have as many entries; SpeechT5Config refuses them"
            )
        if self.hidden_size % self.num_conv_pos_embedding_groups:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_conv_pos_embedding_groups "
                f"({self.num_conv_pos_embedding_groups}); torch refuses the grouped convolution"
            )
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    def model_class(self) -> str:
        return self.default_model_class

    def max_context(self) -> int | None:
        return self.max_text_positions

    def attention(self, attention_names, heads: int, relative: bool = False) -> Attention:
        """q, k, v and out_proj with biases (SpeechT5Attention)."""
        head = self.hidden_size // heads
        d = self.hidden_size
        return Attention(d, heads, heads, head, head, attention_names, True, True, True, True, relative_keys=relative)

    def layer_norm(self, width: int | None = None) -> Norm:
        return Norm("layernorm", width or self.hidden_size, bias=True)

    def prenet(self, prefix: str) -> list[Extra]:
        """The speech prenet (see the class): it reads the clip, never a generated token."""
        runs: Runs = "not_generating"
        modules: list[tuple[str, LearnedTensor | Linear | Norm]] = []
        before = 1
        for index, (width, kernel) in enumerate(zip(self.conv_dim, self.conv_kernel, strict=True)):
            layer = f"{prefix}feature_encoder.conv_layers.{index}."
            modules.append((layer + "conv.weight", LearnedTensor((width, before, kernel), matmul=True)))
            if self.conv_bias:
                modules.append((layer + "conv.bias", LearnedTensor((width,))))
            if self.feat_extract_norm == "layer" or index == 0:
                modules.append((layer + "layer_norm", self.layer_norm(width)))  # GroupNorm(width, width): as many
            before = width
        d, groups, taps = self.hidden_size, self.num_conv_pos_embedding_groups, self.num_conv_pos_embeddings
        modules += [
            (prefix + "feature_projection.layer_norm", self.layer_norm(before)),
            (prefix + "feature_projection.projection", Linear(before, d, True)),
        ]
        if self.mask_time_prob > 0 or self.mask_feature_prob > 0:
            modules.append((prefix + "masked_spec_embed", LearnedTensor((d,))))
        weight = prefix + "pos_conv_embed.conv.parametrizations.weight."
        modules += [
            (weight + "original0", LearnedTensor((1, 1, taps))),
            (weight + "original1", LearnedTensor((d, d // groups, taps), matmul=True)),
            (prefix + "pos_conv_embed.conv.bias", LearnedTensor((d,))),
        ]
        return [Extra("norm" if isinstance(module, Norm) else "other", name, module, runs) for name, module in modules]

    def to_spec(self) -> ModelSpec:
        d, root = self.hidden_size, "speecht5."
        encoder_heads = self.encoder_attention_heads
        encoder = Layer(
            f"{root}encoder.wrapped_encoder.layers.{{i}}",
            self.attention(ENCODER_ATTENTION, encoder_heads, relative=True),
            DenseFfn(d, self.encoder_ffn_dim, False, self.hidden_act, FEED_FORWARD, bias=True),
            (("layer_norm", self.layer_norm()), ("final_layer_norm", self.layer_norm())),
            stack="encoder",
        )
        heads = self.decoder_attention_heads
        decoder = Layer(
            f"{root}decoder.wrapped_decoder.layers.{{i}}",
            self.attention(SELF_ATTENTION, heads),
            DenseFfn(d, self.decoder_ffn_dim, False, self.hidden_act, FEED_FORWARD, bias=True),
            (
                ("self_attn_layer_norm", self.layer_norm()),
                ("encoder_attn_layer_norm", self.layer_norm()),
                ("final_layer_norm", self.layer_norm()),
            ),
            cross_attention=self.attention(CROSS_ATTENTION, heads),
        )
        runs: Runs = "not_generating"
        distances = Table(2 * self.encoder_max_relative_position, d // encoder_heads)
        extras = self.prenet(f"{root}encoder.prenet.") + [
            Extra("norm", f"{root}encoder.wrapped_encoder.layer_norm", self.layer_norm(), runs),
            Extra("embedding", f"{root}encoder.wrapped_encoder.embed_positions.pe_k", distances, runs),
        ]
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=d,
            vocab_size=self.vocab_size,
            layers=(encoder,) * self.encoder_layers + (decoder,) * self.decoder_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.prenet.embed_tokens",
                "",
                lm_head="text_decoder_postnet.lm_head",
                base_model_prefix="speecht5",
            ),
            extras=tuple(extras),
        )

    def notes(self) -> list[str]:
        notes = [
            "Encoder-decoder over raw samples: per generated token only the decoder runs (its cross-attention "
            "projects the encoder output's keys and values once); the encoder's length follows the clip, so the "
            "context stands for it too, and each encoder score also reads the key's distance embedding. What a clip "
            "costs (`audio`) is not counted: SpeechT5 reads no fixed window."
        ]
        if self.architectures and self.architectures[0] != self.default_model_class:
            notes.append(
                f"{self.architectures[0]} is not counted: its speech decoder prenet and postnet (and HiFi-GAN "
                f"vocoder) are not laid out; counted as {self.default_model_class}."
            )
        return notes
