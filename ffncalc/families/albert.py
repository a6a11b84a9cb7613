"""Google's ALBERT: BERT's post-LN layers with their parameters shared across the depth (groups of layers that every
step of the stack runs again), and embeddings narrower than the layers."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
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
    Table,
    names,
)
from .bert import EncoderClasses
from .blocks import heads_divide
from .registry import family

ALBERT_ATTENTION = names(q="attention.query", k="attention.key", v="attention.value", o="attention.dense")
ALBERT_MLP = names(up="ffn", down="ffn_output")

# ALBERT's classes: (pooler, masked-LM head, sentence-order head, classifier outputs).
ALBERT_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForPreTraining": (True, True, True, None),
    "ForMaskedLM": (False, True, False, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForTokenClassification": (False, False, False, "labels"),
    "ForQuestionAnswering": (False, False, False, "labels"),
    "ForMultipleChoice": (True, False, False, 1),
}


@family("albert", transformers="AlbertConfig", architecture="ALBERT", model_class="AlbertForMaskedLM")
class AlbertConfig(EncoderClasses):
    """configuration_albert.py / modeling_albert.py.

    Embeddings: word, position and token-type tables and a LayerNorm, embedding_size wide; the encoder maps them to
    hidden_size (embedding_hidden_mapping_in, with a bias). The encoder holds num_hidden_groups groups of
    inner_group_num post-LN layers (attention query, key, value, dense with biases and attention.LayerNorm; ffn and
    ffn_output with biases, full_layer_layer_norm). Step i of num_hidden_layers runs every layer of group
    int(i / (num_hidden_layers / num_hidden_groups)), as transformers computes it: a group's parameters count once,
    its FLOPs at every step that runs it. Heads: a pooler (albert.pooler, a linear layer) on the bare model and the
    pooled classes; the masked-LM predictions (dense to embedding_size, LayerNorm, a decoder tied to the word table,
    predictions.bias); the sentence-order head sop_classifier.classifier (num_labels wide); classifiers.
    """

    class_prefix = "Albert"
    base_model_prefix = "albert"
    classes = frozenset(ALBERT_HEADS)
    labelled_classes = frozenset(
        {"ForPreTraining", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering"}
    )

    vocab_size: Width
    embedding_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_hidden_groups: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    inner_group_num: LayerCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    type_vocab_size: Width
    tie_word_embeddings: Flag

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @model_validator(mode="after")
    def _check_shapes(self) -> AlbertConfig:
        if self.num_hidden_groups > self.num_hidden_layers:
            # transformers builds it, but the groups past the layers never run: parameters without FLOPs, which a
            # layer of ffncalc's spec cannot hold
            raise ValueError(
                f"num_hidden_groups ({self.num_hidden_groups}) exceeds num_hidden_layers ({self.num_hidden_layers}): "
                "groups past the layers never run, and ffncalc does not count such a model"
            )
        return self

    def layer_norm(self, dim: int | None = None) -> Norm:
        return Norm("layernorm", dim or self.hidden_size, bias=True)

    def group_of_step(self, step: int) -> int:
        """The group step STEP runs: int(step / (num_hidden_layers / num_hidden_groups)), transformers' own float
        expression (modeling_albert.py AlbertTransformer.forward), so that it rounds where transformers does."""
        return int(step / (self.num_hidden_layers / self.num_hidden_groups))

    def layers(self, root: str) -> tuple[Layer, ...]:
        """Each layer run, in order: inner_group_num per step; the first run of a group's layer holds its parameters,
        the later ones borrow them."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        attention = Attention(
            hidden, heads, heads, hidden // heads, hidden // heads, ALBERT_ATTENTION, True, True, True, True
        )
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, ALBERT_MLP, bias=True)
        norms = (("attention.LayerNorm", self.layer_norm()), ("full_layer_layer_norm", self.layer_norm()))
        run, held = [], set()
        for step in range(self.num_hidden_layers):
            group = self.group_of_step(step)
            for inner in range(self.inner_group_num):
                name = f"{root}encoder.albert_layer_groups.{group}.albert_layers.{inner}"
                borrowed = ("",) if name in held else ()
                held.add(name)
                run.append(Layer(name, attention, ffn, norms, stack="encoder", borrowed=borrowed))
        return tuple(run)

    def to_spec(self) -> ModelSpec:
        root, hidden, width = self.root, self.hidden_size, self.embedding_size
        pooler, mlm, sentence_order, classifier = ALBERT_HEADS[self.head_class()]
        extras: list[Extra] = [
            Extra("embedding", f"{root}embeddings.position_embeddings", Table(self.max_position_embeddings, width)),
            Extra("embedding", f"{root}embeddings.token_type_embeddings", Table(self.type_vocab_size, width)),
            Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm(width)),
            Extra("other", f"{root}encoder.embedding_hidden_mapping_in", Linear(width, hidden, bias=True)),
        ]
        if pooler:
            extras.append(self.linear(f"{root}pooler", hidden, hidden))
        if mlm:
            extras.append(Extra("lm_head", "predictions.dense", Linear(hidden, width, bias=True)))
            extras.append(Extra("norm", "predictions.LayerNorm", self.layer_norm(width)))
            if not self.tie_word_embeddings:
                extras.append(Extra("lm_head", "predictions.decoder.bias", LearnedTensor((self.vocab_size,))))
        if sentence_order:
            extras.append(self.linear("sop_classifier.classifier", hidden, self.labels()))
        if classifier is not None:
            module = "qa_outputs" if self.head_class() == "ForQuestionAnswering" else "classifier"
            extras.append(self.linear(module, hidden, classifier if isinstance(classifier, int) else self.labels()))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=self.layers(root),
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}embeddings.word_embeddings",
                "",
                lm_head="predictions.decoder",
                base_model_prefix=self.base_model_prefix,
                lm_head_bias="predictions.bias",
            ),
            embedding_dim=width if width != hidden else None,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(extras),
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),),
        )
