"""Perceiver IO (deepmind/language-perceiver), its masked LM: the input's tokens are read by cross-attention into
num_latents learned latents (d_latents wide), which attend among themselves through num_self_attends_per_block layers
run num_blocks times with the same weights; max_position_embeddings learned decoder queries then read the latents by
cross-attention, and each is decoded through the token table. No layer runs per input token: the encoder's
cross-attention projects each input token's keys and values, everything else runs over a fixed number of positions
(Pooling.fixed_queries, fixed_keys)."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import HeadCount, LayerCount, Name, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    ModelNames,
    ModelSpec,
    Norm,
    Pooling,
    names,
)
from ..values import replace
from .bert import EncoderClasses
from .registry import family

PERCEIVER_ATTENTION = names(
    q="attention.self.query", k="attention.self.key", v="attention.self.value", o="attention.output.dense"
)
PERCEIVER_MLP = names(up="mlp.dense1", down="mlp.dense2")
# PerceiverForMaskedLM's decoder (PerceiverBasicDecoder): qk_channels=8 * 32, num_heads=8, v_channels=d_model, fixed
# in modeling_perceiver.py whatever the config says.
DECODER_HEADS, DECODER_QK = 8, 8 * 32


@family(
    "perceiver",
    transformers="PerceiverConfig",
    architecture="Perceiver IO",
    model_class="PerceiverForMaskedLM",
    read_beyond={"pad_token_id": "no field of PerceiverConfig: a padding row, when a config gives one, is checked"},
)
class PerceiverConfig(EncoderClasses):
    """configuration_perceiver.py / modeling_perceiver.py, PerceiverForMaskedLM: under perceiver.*, the text
    preprocessor's token and position tables (input_preprocessor.embeddings, position_embeddings: d_model wide,
    max_position_embeddings rows), the latents (embeddings.latents [num_latents, d_latents]), the encoder's
    cross_attention and its self_attends.{i} (num_self_attends_per_block of them, run num_blocks times: their weights
    count once, their FLOPs at every run) and the decoder's decoding_cross_attention with its queries
    (decoder.output_position_encodings.position_embeddings [max_position_embeddings, d_model]); embedding_decoder's
    bias, its weight the token table's.

    Each is a PerceiverLayer: attention.self (layernorm1 over the queries, layernorm2 over a cross-attention's inputs;
    query, key and value biased), attention.output.dense, layernorm and mlp (dense1, dense2, widening_factor ×
    its queries' width). The encoder's cross-attention: latents' queries (d_latents) against the input's keys
    (d_model), qk_channels wide (else d_model with cross_attention_shape_for_attention 'kv', d_latents with 'q'), v
    v_channels (else qk), num_cross_attention_heads heads, back to d_latents; the self-attention layers qk_channels
    (else d_latents) and v_channels (else qk), num_self_attention_heads heads, their output v_channels wide, which the
    residual needs to be d_latents (refused otherwise); the decoder's 8 heads, qk 256, v d_model, queries d_model wide,
    keys the latents', widening 1."""

    class_prefix = "Perceiver"
    base_model_prefix = "perceiver"
    classes = frozenset({"ForMaskedLM"})
    labelled_classes = frozenset()

    vocab_size: Width
    d_model: Width
    d_latents: Width
    num_latents: Width
    num_blocks: LayerCount
    num_self_attends_per_block: LayerCount
    num_self_attention_heads: HeadCount
    num_cross_attention_heads: HeadCount
    qk_channels: Width | None
    v_channels: Width | None
    cross_attention_shape_for_attention: Literal["kv", "q"]
    self_attention_widening_factor: Width
    cross_attention_widening_factor: Width
    hidden_act: Name
    max_position_embeddings: Width
    pad_token_id: int | None = None  # read beyond the class (no padding row in its tables)

    @model_validator(mode="after")
    def _check_perceiver(self) -> PerceiverConfig:
        named = (self.architectures or [""])[0]
        if named.startswith(self.class_prefix) and named != "PerceiverForMaskedLM":
            raise ValueError(
                f"architectures {named!r}: ffncalc counts PerceiverForMaskedLM only (the other Perceiver classes build "
                "their preprocessors and decoders from arguments, not from the config)"
            )
        for heads, what in ((self.num_self_attention_heads, "self"), (self.num_cross_attention_heads, "cross")):
            if self.d_latents % heads:
                raise ValueError(
                    f"d_latents ({self.d_latents}) must be divisible by num_{what}_attention_heads ({heads}), as "
                    "PerceiverEncoder checks"
                )
        for qk, v, heads in (self.cross_widths() + (self.num_cross_attention_heads,),) + (
            self.self_widths() + (self.num_self_attention_heads,),
            (DECODER_QK, self.d_model, DECODER_HEADS),
        ):
            if qk % heads or v % heads:
                raise ValueError(
                    f"qk_channels ({qk}) and v_channels ({v}) must be divisible by the heads ({heads}), as "
                    "PerceiverSelfAttention checks"
                )
        if self.self_widths()[1] != self.d_latents:
            raise ValueError(
                f"v_channels ({self.self_widths()[1]}): the self-attention's output is v_channels wide and its residual "
                f"adds it to the latents, d_latents ({self.d_latents}) wide; transformers cannot run another"
            )
        return self

    def cross_widths(self) -> tuple[int, int]:
        """The encoder's cross-attention (qk, v): PerceiverAttention's defaults for a cross-attention."""
        shaped = self.d_model if self.cross_attention_shape_for_attention == "kv" else self.d_latents
        qk = self.qk_channels or shaped
        return qk, self.v_channels or qk

    def self_widths(self) -> tuple[int, int]:
        """The self-attention's (qk, v)."""
        qk = self.qk_channels or self.d_latents
        return qk, self.v_channels or qk

    def layer(
        self,
        name: str,
        widths: tuple[int, int],
        heads: int,
        queries: int,
        keys: int | None,
        widening: int,
        pooling: Pooling,
    ) -> Layer:
        """A PerceiverLayer under NAME: QUERIES wide queries and output, KEYS wide keys and values (None: the queries',
        a self-attention), the (qk, v) WIDTHS over HEADS heads, an MLP WIDENING × the queries."""
        qk, v = widths
        attention = Attention(
            queries,
            heads,
            heads,
            qk // heads,
            v // heads,
            PERCEIVER_ATTENTION,
            q_bias=True,
            k_bias=True,
            v_bias=True,
            o_bias=True,
            kv_input_size=keys,
        )
        norm = Norm("layernorm", queries, bias=True)
        cross = () if keys is None else (("attention.self.layernorm2", Norm("layernorm", keys, bias=True)),)
        norms = (("attention.self.layernorm1", norm), *cross, ("layernorm", norm))
        ffn = DenseFfn(queries, widening * queries, False, self.hidden_act, PERCEIVER_MLP, bias=True)
        return Layer(name, attention, ffn, norms, stack="encoder", pooling=pooling)

    def layers(self) -> tuple[Layer, ...]:
        root, latents = self.root, self.num_latents
        cross = self.layer(
            f"{root}encoder.cross_attention",
            self.cross_widths(),
            self.num_cross_attention_heads,
            self.d_latents,
            self.d_model,
            self.cross_attention_widening_factor,
            Pooling(0, 0, fixed_queries=latents),
        )
        attend = self.layer(
            f"{root}encoder.self_attends.{{i}}",
            self.self_widths(),
            self.num_self_attention_heads,
            self.d_latents,
            None,
            self.self_attention_widening_factor,
            Pooling(0, 0, fixed_queries=latents, fixed_keys=latents),
        )
        per_block = self.num_self_attends_per_block
        attends = []
        for block in range(self.num_blocks):  # each block runs the same layers again: borrowed after the first
            held = replace(attend, index_offset=1 + block * per_block, borrowed=("",) if block else ())
            attends += [held] * per_block
        decoder = self.layer(
            f"{root}decoder.decoding_cross_attention",
            (DECODER_QK, self.d_model),
            DECODER_HEADS,
            self.d_model,
            self.d_latents,
            1,
            Pooling(0, 0, fixed_queries=self.max_position_embeddings, fixed_keys=latents),
        )
        return (cross, *attends, replace(decoder, index_offset=1 + self.num_blocks * per_block))

    def extras(self) -> tuple[Extra, ...]:
        root = self.root
        return (
            Extra("embedding", f"{root}embeddings.latents", LearnedTensor((self.num_latents, self.d_latents))),
            Extra(
                "other",
                f"{root}decoder.output_position_encodings.position_embeddings",
                LearnedTensor((self.max_position_embeddings, self.d_model)),
            ),
        )

    def to_spec(self) -> ModelSpec:
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.layers(),
            final_norm=None,
            tie_word_embeddings=True,
            names=ModelNames(
                f"{self.root}input_preprocessor.embeddings",
                "",
                lm_head="embedding_decoder",
                position_embeddings=f"{self.root}input_preprocessor.position_embeddings",
                base_model_prefix=self.base_model_prefix,
                lm_head_bias="embedding_decoder.bias",
            ),
            position_embeddings=self.max_position_embeddings,
            lm_head_bias=True,
            extras=self.extras(),
            output_positions=self.max_position_embeddings,
        )
