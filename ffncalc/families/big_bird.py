"""BigBird (google/bigbird-roberta-base): BERT's embeddings, post-LN layers and heads under bert.*, the pooler in every
class but the span classifier, and a self-attention that is block-sparse by default (attention_type "block_sparse"):
blocks of block_size queries read their neighbouring blocks, the first and last (global) blocks and num_random_blocks
blocks drawn at random, over the input padded to whole blocks."""

from __future__ import annotations

from typing import Literal

from ..schema import Flag, Width, WidthOrZero
from ..spec import BlockSparse, Extra, Layer, ModelSpec
from ..values import replace
from .bert import BertConfig
from .registry import family

# BigBird's classes: (pooler, masked-LM head, next-sentence head, classifier outputs), as BERT's HEADS. BigBirdModel is
# built with its pooler everywhere but in BigBirdForQuestionAnswering (add_pooling_layer=False), whose head is its own
# (qa_classifier, two outputs: the class sets num_labels to 2).
BIG_BIRD_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForPreTraining": (True, True, True, None),
    "ForMaskedLM": (True, True, False, None),
    "ForCausalLM": (True, True, False, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForMultipleChoice": (True, False, False, 1),
    "ForTokenClassification": (True, False, False, "labels"),
    "ForQuestionAnswering": (False, False, False, 2),
}


def block_sparse_spec(spec: ModelSpec, sparse: BlockSparse) -> ModelSpec:
    """SPEC with every encoder layer's self-attention block-sparse (SPARSE), its input padded to whole blocks above
    the length transformers attends fully instead."""
    layers = tuple(
        replace(layer, attention=replace(layer.attention, block_sparse=sparse))
        if layer.stack == "encoder" and layer.attention is not None
        else layer
        for layer in spec.layers
    )
    return replace(spec, layers=layers, encoder_pad_to=sparse.block_size, encoder_pad_above=sparse.full_up_to)


@family("big_bird", transformers="BigBirdConfig", architecture="BigBird", model_class="BigBirdForMaskedLM")
class BigBirdConfig(BertConfig):
    """configuration_big_bird.py / modeling_big_bird.py: BERT's embeddings under bert.* (word, position and token-type
    tables, a LayerNorm), post-LN layers (attention.self's query, key and value, biased with use_bias; attention.output
    dense, always biased; the MLP; two LayerNorms), a decoder (is_decoder) with add_cross_attention also attending to an
    encoder's states (crossattention, the same modules). BERT's masked-LM and next-sentence heads under cls.*; the
    sequence classifier RoBERTa's (classifier.dense, classifier.out_proj); the span classifier its own (qa_classifier:
    intermediate.dense, output.dense and output.LayerNorm, qa_outputs to 2). BigBirdModel holds its pooler in every
    class but the span classifier.

    attention_type "block_sparse" (the default; not with add_cross_attention, where BigBirdModel switches to
    "original_full"): an input of at most (5 + 2 · num_random_blocks) · block_size tokens is attended fully (BigBirdModel
    switches, unpadded); a longer one is padded to a multiple of block_size, the layers run over the padded positions
    and the head over the input's (the padding is dropped after the last layer), and each layer's attention scores
    blocks: the first and last query blocks against all keys, the second and second-to-last against 4 +
    num_random_blocks blocks, every middle block against 5 + num_random_blocks (Attention.block_sparse,
    BlockSparse.keys). In eval transformers draws no random block (it gathers the first block num_random_blocks
    times), in training it draws them: the same matmuls either way."""

    class_prefix = "BigBird"
    base_model_prefix = "bert"
    classes = frozenset(BIG_BIRD_HEADS)
    bert_heads = BIG_BIRD_HEADS
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification"})

    attention_type: Literal["original_full", "block_sparse"]
    block_size: Width
    num_random_blocks: WidthOrZero
    use_bias: Flag

    def block_sparse(self) -> BlockSparse | None:
        """The self-attention's blocks, when block-sparse: attention_type "block_sparse" and no cross-attention."""
        if self.attention_type != "block_sparse" or self.add_cross_attention:
            return None
        return BlockSparse(block_size=self.block_size, random_blocks=self.num_random_blocks)

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | (set() if self.block_sparse() else {"block_size", "num_random_blocks"})

    def encoder_layer(self) -> Layer:
        layer = super().encoder_layer()
        biased = {"q_bias": self.use_bias, "k_bias": self.use_bias, "v_bias": self.use_bias}
        assert layer.attention is not None
        cross = layer.cross_attention
        return replace(
            layer,
            attention=replace(layer.attention, **biased),
            cross_attention=replace(cross, **biased) if cross is not None else None,
        )

    def head_extras(self) -> list[Extra]:
        hidden, head = self.hidden_size, self.head_class()
        pooler = self.linear(f"{self.root}pooler", hidden, hidden)  # BigBirdModel.pooler, a Linear itself
        if head == "ForSequenceClassification":
            return [
                pooler,
                self.linear("classifier.dense", hidden, hidden),
                self.linear("classifier.out_proj", hidden, self.labels()),
            ]
        if head == "ForQuestionAnswering":
            return [
                self.linear("qa_classifier.intermediate.dense", hidden, self.intermediate_size),
                self.linear("qa_classifier.output.dense", self.intermediate_size, hidden),
                Extra("norm", "qa_classifier.output.LayerNorm", self.layer_norm()),
                self.linear("qa_classifier.qa_outputs", hidden, 2),
            ]
        return [pooler if extra.name == f"{self.root}pooler.dense" else extra for extra in super().head_extras()]

    def notes(self) -> list[str]:
        notes = super().notes()
        sparse = self.block_sparse()
        if sparse is not None and self.is_decoder:
            notes.append(
                "is_decoder: BigBirdModel switches a decoder that caches keys (generation) to full attention; the "
                "figures are a forward without a cache, block-sparse as the config says."
            )
        return notes

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        sparse = self.block_sparse()
        return spec if sparse is None else block_sparse_spec(spec, sparse)
