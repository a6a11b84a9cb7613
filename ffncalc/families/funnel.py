"""Funnel Transformer (funnel-transformer/small): an encoder in blocks, each block after the first running over the
sequence pooled to half its length, then (in every class but the classifiers, which read FunnelBaseModel) a decoder
whose layers run again at the full length over the last block's output upsampled and added to the first block's; every
attention with relative positions of its own (relative_shift) and token-type scores."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, Width, WidthOrZero
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    Parameter,
    Pooling,
    Runs,
    names,
)
from .bert import EncoderClasses
from .registry import family

FUNNEL_ATTENTION = names(q="attention.q_head", k="attention.k_head", v="attention.v_head", o="attention.post_proj")
FUNNEL_FFN = names(up="ffn.linear_1", down="ffn.linear_2")
Blocks = Annotated[list[LayerCount], Field(min_length=1, max_length=64)]
Repeats = Annotated[list[LayerCount], Field(min_length=1, max_length=64)]

# Funnel's classes: (the decoder runs, the head's modules as (name, outputs, runs): outputs "labels" for num_labels).
# FunnelForSequenceClassification and FunnelForMultipleChoice build FunnelBaseModel (embeddings and encoder, no
# decoder) and read the first position (FunnelClassificationHead: linear_hidden, then linear_out); the masked LM's head
# is lm_head (its weight the word table's, tied), the others' per token.
FUNNEL_HEADS: dict[str, tuple[bool, tuple[tuple[str, int | str, bool], ...]]] = {
    "Model": (True, ()),
    "BaseModel": (False, ()),
    "ForPreTraining": (
        True,
        (("discriminator_predictions.dense", "hidden", True), ("discriminator_predictions.dense_prediction", 1, True)),
    ),
    "ForMaskedLM": (True, ()),
    "ForSequenceClassification": (
        False,
        (("classifier.linear_hidden", "hidden", False), ("classifier.linear_out", "labels", False)),
    ),
    "ForMultipleChoice": (False, (("classifier.linear_hidden", "hidden", False), ("classifier.linear_out", 1, False))),
    "ForTokenClassification": (True, (("classifier", "labels", True),)),
    "ForQuestionAnswering": (True, (("qa_outputs", "labels", True),)),
}


@family("funnel", transformers="FunnelConfig", architecture="Funnel Transformer", model_class="FunnelForMaskedLM")
class FunnelConfig(EncoderClasses):
    """configuration_funnel.py / modeling_funnel.py: the word table and a LayerNorm (embeddings.layer_norm) under
    funnel.*; the encoder's blocks (encoder.blocks.{block}.{i}, block_sizes layers each) and the decoder's
    num_decoder_layers layers (decoder.layers.{i}), each a FunnelLayer: attention (q_head unbiased, k_head, v_head and
    post_proj biased, d_model → n_head · d_head and back; r_w_bias, r_r_bias and r_s_bias [n_head, d_head], r_kernel
    [d_model, n_head, d_head], seg_embed [2, n_head, d_head]; a LayerNorm) and ffn (linear_1, linear_2, biased; a
    LayerNorm). FunnelForMaskedLM's lm_head is tied to the word table and keeps its bias.

    Block b > 0 pools the sequence once more (Layer.pooling): its first layer's queries over the pooled sequence, its
    keys and values over the block's input (pool_q_only; with pool_q_only false all three pooled), its other layers over
    the pooled sequence; separate_cls keeps the first position apart, truncate_seq drops the last before pooling (a
    sequence of at most 2 positions, 1 without separate_cls, is not pooled). The decoder's layers run over the input's
    length. Every attention scores its queries against the relative positions of its block (Attention.relative_shift,
    R = 2 · its queries + its keys where it pools, else 2 · its positions, each projected by r_kernel) and against the
    two token types (seg_embed). attention_type "factorized" is refused; block_repeats other than 1 too."""

    class_prefix = "Funnel"
    base_model_prefix = "funnel"
    classes = frozenset(FUNNEL_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering"})
    informational_fields = frozenset({"pad_token_id", "pooling_type"})

    vocab_size: Width
    block_sizes: Blocks
    block_repeats: Repeats | None
    num_decoder_layers: WidthOrZero
    d_model: Width
    n_head: HeadCount
    d_head: Width
    d_inner: Width
    hidden_act: Name
    attention_type: Literal["relative_shift", "factorized"]
    separate_cls: Flag
    truncate_seq: Flag
    pool_q_only: Flag
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_funnel(self) -> FunnelConfig:
        if self.attention_type != "relative_shift":
            raise ValueError(
                f"attention_type {self.attention_type!r}: ffncalc counts Funnel's 'relative_shift' attention only (its "
                "'factorized' form scores the positions through sinusoid products of its own)"
            )
        if self.block_repeats is not None and len(self.block_repeats) != len(self.block_sizes):
            raise ValueError("block_repeats and block_sizes must have the same length, as transformers asserts")
        if self.block_repeats is not None and any(repeats != 1 for repeats in self.block_repeats):
            raise ValueError(
                f"block_repeats {self.block_repeats}: ffncalc counts each of Funnel's layers run once (block_repeats "
                "all 1, the default)"
            )
        return self

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.d_model, bias=True)

    def decoder_runs(self) -> bool:
        return FUNNEL_HEADS[self.head_class()][0]

    def layer(self, name: str, pooling: Pooling | None, index_offset: int) -> Layer:
        """One FunnelLayer under NAME ({i} its index), pooled by POOLING."""
        d, heads, head_dim = self.d_model, self.n_head, self.d_head
        attention = Attention(
            d,
            heads,
            heads,
            head_dim,
            head_dim,
            FUNNEL_ATTENTION,
            k_bias=True,
            v_bias=True,
            o_bias=True,
            relative_shift=True,
            segments=2,
        )
        ffn = DenseFfn(d, self.d_inner, False, self.hidden_act, FUNNEL_FFN, bias=True)
        norms = (("attention.layer_norm", self.layer_norm()), ("ffn.layer_norm", self.layer_norm()))
        parameters = tuple(
            Parameter("attention", part, f"attention.{part}", shape)
            for part, shape in (
                ("r_w_bias", (heads, head_dim)),
                ("r_r_bias", (heads, head_dim)),
                ("r_kernel", (d, heads, head_dim)),
                ("r_s_bias", (heads, head_dim)),
                ("seg_embed", (2, heads, head_dim)),
            )
        )
        return Layer(
            name,
            attention,
            ffn,
            norms,
            stack="encoder",
            parameters=parameters,
            pooling=pooling,
            index_offset=index_offset,
        )

    def pooling(self, times: int, pools_queries: bool) -> Pooling | None:
        """Block TIMES's pooling; POOLS_QUERIES: the block's first layer, its keys and values over the block's input."""
        if times == 0:
            return None
        keys = times - 1 if pools_queries and self.pool_q_only else times
        return Pooling(times=times, keys_times=keys, keep_first=self.separate_cls, drop_last=self.truncate_seq)

    def layers(self) -> tuple[Layer, ...]:
        root, layers, before = self.root, [], 0
        for block, size in enumerate(self.block_sizes):
            name = f"{root}encoder.blocks.{block}.{{i}}"
            layers += [self.layer(name, self.pooling(block, i == 0), before) for i in range(size)]
            before += size
        if self.decoder_runs():
            layers += [self.layer(f"{root}decoder.layers.{{i}}", None, before)] * self.num_decoder_layers
        return tuple(layers)

    def extras(self) -> list[Extra]:
        d = self.d_model
        extras = [Extra("norm", f"{self.root}embeddings.layer_norm", self.layer_norm())]
        for name, outputs, per_token in FUNNEL_HEADS[self.head_class()][1]:
            width = d if outputs == "hidden" else self.labels() if outputs == "labels" else outputs
            assert isinstance(width, int)
            runs: Runs = "every_token" if per_token else "not_generating"
            extras.append(Extra("other", name, Linear(d, width, bias=True), runs))
        return extras

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields()
        return unused if self.decoder_runs() else unused | {"num_decoder_layers"}

    def to_spec(self) -> ModelSpec:
        mlm = self.head_class() == "ForMaskedLM"
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.layers(),
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(f"{self.root}embeddings.word_embeddings", "", base_model_prefix=self.base_model_prefix),
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(self.extras()),
        )
