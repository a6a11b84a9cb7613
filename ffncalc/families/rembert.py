"""Google's RemBERT: BERT's layers between decoupled embeddings, narrow tables in and a wide untied head out."""

from __future__ import annotations

from ..schema import Width
from ..spec import Extra, Linear, ModelNames, ModelSpec
from ..values import replace
from .bert import HEADS, BertConfig
from .registry import family


@family("rembert", transformers="RemBertConfig", architecture="RemBERT", model_class="RemBertForMaskedLM")
class RemBertConfig(BertConfig):
    """configuration_rembert.py / modeling_rembert.py.

    Embeddings: word, position and token-type tables and a LayerNorm, input_embedding_size wide, mapped to
    hidden_size by the encoder (encoder.embedding_hidden_mapping_in, with a bias); BERT's post-LN layers (a decoder
    with add_cross_attention also attends to an encoder's states). The masked-LM head cls.predictions is a dense
    layer to output_embedding_size, a LayerNorm, and a decoder of its own (output_embedding_size → vocab, with a
    bias): RemBERT ties nothing, whatever tie_word_embeddings says. A pooler on the bare model and the sequence and
    multiple-choice classifiers; no pre-training or next-sentence class.
    """

    class_prefix = "RemBert"
    base_model_prefix = "rembert"
    classes = frozenset(HEADS) - {"ForPreTraining", "ForNextSentencePrediction", "LMHeadModel"}

    input_embedding_size: Width
    output_embedding_size: Width

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | {"tie_word_embeddings"}  # no weight is tied (no _tied_weights_keys)

    def embedding_width(self) -> int:
        return self.input_embedding_size

    def embeddings(self, width: int) -> list[Extra]:
        mapping = Linear(width, self.hidden_size, bias=True)
        return [*super().embeddings(width), Extra("other", f"{self.root}encoder.embedding_hidden_mapping_in", mapping)]

    def prediction_transform(self) -> list[Extra]:
        """cls.predictions' dense (hidden → output_embedding_size) and LayerNorm, with no transform module between."""
        width = self.output_embedding_size
        return [
            Extra("lm_head", "cls.predictions.dense", Linear(self.hidden_size, width, bias=True)),
            Extra("norm", "cls.predictions.LayerNorm", self.layer_norm(width)),
        ]

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        return self.model_names("cls.predictions.decoder", ""), []  # the decoder's bias beside its weight

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(
            spec, tie_word_embeddings=False, lm_head_dim=self.output_embedding_size if spec.lm_head else None
        )
