"""BERT and the encoders that keep its layout: embeddings with token types, post-LN layers, and the
heads of whichever class the checkpoint was saved from."""

from __future__ import annotations

from typing import ClassVar

from pydantic import model_validator

from ..schema import Flag, HFConfig, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, Linear, ModelNames, ModelSpec, Norm, Table, names

BERT_ATTENTION = names(
    q="attention.self.query", k="attention.self.key", v="attention.self.value", o="attention.output.dense"
)
BERT_MLP = names(up="intermediate.dense", down="output.dense")

# What each class adds to the encoder: (pooler, masked-LM head, next-sentence head, classifier outputs).
# The classifier's outputs: "labels" (num_labels), or a fixed width.
HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForPreTraining": (True, True, True, None),
    "ForMaskedLM": (False, True, False, None),
    "LMHeadModel": (False, True, False, None),
    "ForCausalLM": (False, True, False, None),
    "ForNextSentencePrediction": (True, False, True, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForMultipleChoice": (True, False, False, 1),
    "ForTokenClassification": (False, False, False, "labels"),
    "ForQuestionAnswering": (False, False, False, 2),
}


class BertConfig(HFConfig):
    """configuration_bert.py / modeling_bert.py.

    Embeddings: word, position and token-type tables and a LayerNorm. Layers (post-LN): q, k, v and
    output dense with biases, then LayerNorm; intermediate and output dense with biases, then
    LayerNorm. The class in ``architectures`` decides the heads, as transformers builds it: a pooler
    (dense + tanh), the masked-LM head (a dense transform, a LayerNorm, and a decoder tied to the
    word table with its own bias), the next-sentence head (dense to 2), or a classifier.
    """

    architecture = "BERT"
    config_class = "BertConfig"
    default_model_class = "BertForPreTraining"  # what bert-base-uncased and most BERT checkpoints store
    class_prefix: ClassVar[str] = "Bert"
    base_model_prefix: ClassVar[str] = "bert"
    informational_fields = frozenset()

    vocab_size: Width = 30522
    hidden_size: Width = 768
    num_hidden_layers: LayerCount = 12
    num_attention_heads: HeadCount = 12
    intermediate_size: Width = 3072
    hidden_act: Name = "gelu"
    max_position_embeddings: PositionCount = 512
    type_vocab_size: Width = 2
    tie_word_embeddings: Flag = True
    id2label: dict[str, Name] | None = None

    @model_validator(mode="after")
    def _check_heads(self) -> BertConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        return self

    def defaults_used(self):
        return [d for d in super().defaults_used() if d.field != "id2label"]

    def heads(self) -> tuple[bool, bool, bool, int | None]:
        """(pooler, masked-LM head, next-sentence head, classifier width) of the class counted."""
        suffix = self.model_class().removeprefix(self.class_prefix)
        pooler, mlm, nsp, classifier = HEADS.get(suffix, HEADS[self.default_model_class.removeprefix(self.class_prefix)])
        if classifier == "labels":
            classifier = len(self.id2label) if self.id2label else 2
        return pooler, mlm, nsp, classifier if isinstance(classifier, int) else None

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in HEADS else self.default_model_class

    def encoder_layer(self) -> Layer:
        hidden = self.hidden_size
        head_dim = hidden // self.num_attention_heads
        heads = self.num_attention_heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, BERT_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norm = Norm("layernorm", hidden, bias=True)
        norms = (("attention.output.LayerNorm", norm), ("output.LayerNorm", norm))
        return Layer(f"{self.base_model_prefix}.encoder.layer.{{i}}", attention, ffn, norms, stack="encoder")

    def to_spec(self) -> ModelSpec:
        hidden, prefix = self.hidden_size, self.base_model_prefix
        norm = Norm("layernorm", hidden, bias=True)
        pooler, mlm, nsp, classifier = self.heads()
        extras: list[Extra] = [
            Extra("embedding", f"{prefix}.embeddings.token_type_embeddings", Table(self.type_vocab_size, hidden)),
            Extra("norm", f"{prefix}.embeddings.LayerNorm", norm),
        ]
        if pooler:
            extras.append(Extra("other", f"{prefix}.pooler.dense", Linear(hidden, hidden, bias=True), "not_generating"))
        if mlm:
            extras.append(Extra("lm_head", "cls.predictions.transform.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "cls.predictions.transform.LayerNorm", norm))
        if nsp:
            extras.append(Extra("other", "cls.seq_relationship", Linear(hidden, 2, bias=True), "not_generating"))
        if classifier is not None:
            module = "qa_outputs" if classifier == 2 and self.model_class().endswith("QuestionAnswering") else "classifier"
            extras.append(Extra("other", module, Linear(hidden, classifier, bias=True), "not_generating"))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(self.encoder_layer(),) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=True,
            names=ModelNames(
                f"{prefix}.embeddings.word_embeddings",
                "",
                lm_head="cls.predictions.decoder",
                position_embeddings=f"{prefix}.embeddings.position_embeddings",
                base_model_prefix=prefix,
                lm_head_bias="cls.predictions.bias",
            ),
            position_embeddings=self.max_position_embeddings,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(extras),
        )

    def notes(self) -> list[str]:
        counted = self.model_class()
        if not self.architectures:
            return [f"The config names no class (architectures); counted as {counted}, which bert-base-uncased stores."]
        if counted != self.architectures[0]:
            return [f"{self.architectures[0]} is not a BERT class ffncalc knows; counted as {counted}."]
        return []
