"""Microsoft's TrOCR decoder (trocr): BART's decoder layers as a causal LM, the text side of a
VisionEncoderDecoderModel, its cross-attention reading the image encoder's width."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Norm, Table
from .bart import BART_MLP, CROSS_ATTENTION, SELF_ATTENTION
from .blocks import check_padding_row
from .registry import family

# TrOCRLearnedPositionalEmbedding: fairseq's offset, two rows past max_position_embeddings.
POSITION_OFFSET = 2


@family("trocr", transformers="TrOCRConfig", architecture="TrOCR", model_class="TrOCRForCausalLM")
class TrOCRConfig(HFConfig):
    """configuration_trocr.py / modeling_trocr.py (TrOCRForCausalLM): decoder_layers layers of self-attention
    (q, k, v, out_proj, biased), cross-attention (encoder_attn: q and out_proj d_model wide, k and v reading
    cross_attention_hidden_size, default d_model; TrOCRForCausalLM always sets is_decoder, so every layer holds it)
    and a plain MLP (fc1, fc2, biased), each followed by its LayerNorm; no final norm. Under model.decoder.:
    embed_tokens (scaled by √d_model with scale_embedding: no weight), embed_positions (learned: max_position_embeddings
    + 2 rows; sinusoidal: computed, neither a parameter nor a buffer), layernorm_embedding where the config asks.
    output_projection (no bias) is tied to embed_tokens unless tie_word_embeddings is false."""

    # is_decoder: TrOCRForCausalLM sets it, whatever the config says; scale_embedding multiplies, holds nothing.
    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "is_decoder", "scale_embedding"})

    vocab_size: Width
    d_model: Width
    decoder_layers: LayerCount
    decoder_attention_heads: HeadCount
    decoder_ffn_dim: Width
    activation_function: Name
    max_position_embeddings: PositionCount
    scale_embedding: Flag
    use_learned_position_embeddings: Flag
    layernorm_embedding: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    cross_attention_hidden_size: Width | None
    is_decoder: Flag
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> TrOCRConfig:
        if self.d_model % self.decoder_attention_heads:
            raise ValueError(
                f"d_model ({self.d_model}) is not a multiple of decoder_attention_heads "
                f"({self.decoder_attention_heads}); TrOCRAttention refuses it"
            )
        check_padding_row(self.pad_token_id, self.vocab_size)
        if not self.use_learned_position_embeddings and self.pad_token_id is None:
            raise ValueError(
                "pad_token_id: the sinusoidal positions (use_learned_position_embeddings false) need it; "
                "TrOCRDecoder adds it to the table's length"
            )
        return self

    def unused_fields(self) -> set[str]:
        return set() if self.use_learned_position_embeddings else {"max_position_embeddings"}

    def attention(self, names, kv_input: int | None = None) -> Attention:
        head_dim = self.d_model // self.decoder_attention_heads
        heads = self.decoder_attention_heads
        return Attention(
            self.d_model, heads, heads, head_dim, head_dim, names, True, True, True, True, kv_input_size=kv_input
        )

    def decoder_layer(self) -> Layer:
        """Self-attention, cross-attention over the encoder's cross_attention_hidden_size, the MLP; a LayerNorm each."""
        norm = Norm("layernorm", self.d_model, bias=True)
        ffn = DenseFfn(self.d_model, self.decoder_ffn_dim, False, self.activation_function, BART_MLP, bias=True)
        norms = (("self_attn_layer_norm", norm), ("encoder_attn_layer_norm", norm), ("final_layer_norm", norm))
        cross = self.attention(CROSS_ATTENTION, self.cross_attention_hidden_size)
        return Layer("model.decoder.layers.{i}", self.attention(SELF_ATTENTION), ffn, norms, cross_attention=cross)

    def to_spec(self) -> ModelSpec:
        extras = []
        if self.use_learned_position_embeddings:
            rows = self.max_position_embeddings + POSITION_OFFSET
            extras.append(Extra("embedding", "model.decoder.embed_positions", Table(rows, self.d_model)))
        if self.layernorm_embedding:
            norm = Norm("layernorm", self.d_model, bias=True)
            extras.append(Extra("norm", "model.decoder.layernorm_embedding", norm))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=(self.decoder_layer(),) * self.decoder_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "model.decoder.embed_tokens", "model.decoder.layer_norm", "output_projection", base_model_prefix="model"
            ),
            extras=tuple(extras),
        )

    def notes(self) -> list[str]:
        return [
            "TrOCRForCausalLM is the decoder of a VisionEncoderDecoderModel alone: its cross-attention, counted, runs "
            "only when given the image encoder's states; the encoder is not built."
        ]
