"""BertGeneration: BERT's post-LN layers and embeddings (no token types, no pooler) under a causal LM head of a
decoder and its bias, tied to the word table."""

from __future__ import annotations

from typing import ClassVar

from pydantic import model_validator

from ..schema import Flag
from ..spec import Extra, LearnedTensor, ModelNames
from .bert import BertLayers
from .registry import family

GENERATION_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Encoder": (False, False, False, None),
    "Decoder": (False, True, False, None),
}


@family(
    "bert-generation",
    transformers="BertGenerationConfig",
    architecture="BertGeneration",
    model_class="BertGenerationDecoder",
)
class BertGenerationConfig(BertLayers):
    """configuration_bert_generation.py / modeling_bert_generation.py: BertGenerationEncoder is BERT's embeddings
    (word and position tables, a LayerNorm; no token-type table) and post-LN layers, with cross-attention when
    add_cross_attention (which needs is_decoder), and no pooler. BertGenerationDecoder adds lm_head: a decoder
    (hidden → vocab_size, tied to the word table with tie_word_embeddings) whose bias is lm_head.bias; there is no
    prediction transform."""

    class_prefix = "BertGeneration"
    base_model_prefix = "bert"
    classes = frozenset(GENERATION_HEADS)
    bert_heads: ClassVar[dict[str, tuple[bool, bool, bool, int | str | None]]] = GENERATION_HEADS
    labelled_classes: ClassVar[frozenset[str]] = frozenset()

    is_decoder: Flag
    add_cross_attention: Flag

    @model_validator(mode="after")
    def _check_cross_attention(self) -> BertGenerationConfig:
        if self.add_cross_attention and not self.is_decoder:
            raise ValueError(
                "add_cross_attention: cross-attention needs is_decoder (transformers refuses it otherwise)"
            )
        return self

    @property
    def root(self) -> str:
        """The encoder at the top in BertGenerationEncoder, under bert. in the decoder."""
        return "" if self.head_class() == "Encoder" else self.base_model_prefix + "."

    def cross_attends(self) -> bool:
        return self.add_cross_attention

    def prediction_transform(self) -> list[Extra]:
        return []

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        """lm_head.decoder and its bias lm_head.bias; untied, the decoder keeps a bias of its own too (transformers ties
        lm_head.decoder.bias to lm_head.bias only with the word table)."""
        decoder = "lm_head.decoder"
        extras = (
            [] if self.tie_word_embeddings else [Extra("lm_head", decoder + ".bias", LearnedTensor((self.vocab_size,)))]
        )
        return self.model_names(decoder, "lm_head.bias"), extras
