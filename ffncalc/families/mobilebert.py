"""Google's MobileBERT: BERT's classes and heads around layers that work inside a bottleneck narrower than the hidden
state, with several FFNs a layer, a word table narrower still, and an output head that multiplies by the word table
concatenated with a dense weight of its own."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import Flag, LayerCount, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    Norms,
    Parameter,
    Projection,
    Table,
)
from .bert import BERT_ATTENTION, BERT_MLP, HEADS, BertLayout
from .registry import family

# MobileBERT's classes: BERT's (pooler, masked-LM head, next-sentence head, classifier outputs), with no decoder class.
MOBILEBERT_HEADS = {name: heads for name, heads in HEADS.items() if name not in ("LMHeadModel", "ForCausalLM")}


@family("mobilebert", transformers="MobileBertConfig", architecture="MobileBERT", model_class="MobileBertForMaskedLM")
class MobileBertConfig(BertLayout):
    """configuration_mobilebert.py / modeling_mobilebert.py (google/mobilebert-uncased).

    Embeddings (under mobilebert.*): a word table embedding_size wide; each token's vector, with its two neighbours'
    when trigram_input (3 · embedding_size), goes through embedding_transformation to hidden_size (built always, run
    with trigram_input or a narrower table); position and token-type tables hidden_size wide; a norm. A layer works at
    the true hidden size B (intra_bottleneck_size with use_bottleneck, else hidden_size): with use_bottleneck,
    bottleneck.input maps the hidden state to B (the attention's residual), and with key_query_shared_bottleneck
    bottleneck.attention maps it to B for query and key (built, but not run, when use_bottleneck_attention feeds
    bottleneck.input to all three); value reads the hidden state itself unless use_bottleneck_attention. Query, key,
    value and attention.output.dense (B → B) are biased; then num_feedforward_networks − 1 FFNs (ffn.{j}: intermediate
    and output dense, B ↔ intermediate_size, and a norm) and the last FFN (intermediate, output), whose output goes
    back to hidden_size through output.bottleneck (with use_bottleneck). Every norm but the head's is NoNorm under
    normalization_type "no_norm" (an elementwise weight and bias: a LayerNorm's parameters, never its statistics).

    Heads: BERT's classes; the pooler holds a dense layer only with classifier_activation. The masked-LM head's
    transform (dense hidden → hidden, a LayerNorm) is followed by one matmul with [decoder.weightᵀ; dense.weight]
    (hidden × vocab): the decoder, tied to the word table (embedding_size rows), and cls.predictions.dense, a
    Linear(vocab, hidden − embedding_size) with no bias; then the decoder's bias (cls.predictions.bias)."""

    class_prefix = "MobileBert"
    base_model_prefix = "mobilebert"
    classes = frozenset(MOBILEBERT_HEADS)
    bert_heads = MOBILEBERT_HEADS

    embedding_size: Width
    trigram_input: Flag
    use_bottleneck: Flag
    intra_bottleneck_size: Width
    use_bottleneck_attention: Flag
    key_query_shared_bottleneck: Flag
    num_feedforward_networks: LayerCount
    normalization_type: Literal["no_norm", "layer_norm"]
    classifier_activation: Flag

    @model_validator(mode="after")
    def _check_heads(self) -> MobileBertConfig:  # replaces BERT's: the heads divide the layers' width, not hidden_size
        inner, heads = self.true_hidden_size(), self.num_attention_heads
        if inner % heads:
            raise ValueError(
                f"the layers' width ({inner}: intra_bottleneck_size with use_bottleneck, else hidden_size) is not a "
                f"multiple of num_attention_heads ({heads}); transformers' attention output cannot reach it"
            )
        reads_hidden = not (self.use_bottleneck_attention or self.key_query_shared_bottleneck)
        if self.use_bottleneck and reads_hidden and inner != self.hidden_size:
            raise ValueError(
                "use_bottleneck without use_bottleneck_attention or key_query_shared_bottleneck: query and key read "
                f"the hidden state ({self.hidden_size}) through layers {inner} wide, which transformers' forward refuses"
            )
        if self.has_mlm() and self.embedding_size > self.hidden_size:
            raise ValueError(
                f"embedding_size ({self.embedding_size}) exceeds hidden_size ({self.hidden_size}): the masked-LM head's "
                "dense weight would have hidden_size − embedding_size < 0 rows"
            )
        return self

    def unused_fields(self) -> set[str]:
        unused = set() if self.use_bottleneck else {"intra_bottleneck_size", "key_query_shared_bottleneck"}
        return super().unused_fields() | unused

    def true_hidden_size(self) -> int:
        """The width the layers work at: intra_bottleneck_size with use_bottleneck, else hidden_size (as
        MobileBertConfig sets true_hidden_size)."""
        return self.intra_bottleneck_size if self.use_bottleneck else self.hidden_size

    def embedding_width(self) -> int:
        return self.embedding_size

    def norm(self, dim: int) -> Norm:
        """NoNorm (an elementwise weight and bias) or a LayerNorm: the same parameters either way."""
        return Norm("layernorm", dim, bias=True)

    def heads(self) -> tuple[bool, bool, bool, int | None]:
        pooler, mlm, nsp, classifier = super().heads()
        return pooler and self.classifier_activation, mlm, nsp, classifier

    def encoder_layer(self) -> Layer:
        hidden, inner, heads = self.hidden_size, self.true_hidden_size(), self.num_attention_heads
        head_dim = inner // heads
        values_read_hidden = not self.use_bottleneck_attention and inner != hidden
        attention = Attention(
            inner,
            heads,
            heads,
            head_dim,
            head_dim,
            BERT_ATTENTION,
            True,
            True,
            True,
            True,
            v_input_size=hidden if values_read_hidden else None,
        )
        ffn = DenseFfn(inner, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms: Norms = (("attention.output.LayerNorm", self.norm(inner)), ("output.LayerNorm", self.norm(inner)))
        projections: tuple[Projection, ...] = ()
        parameters: tuple[Parameter, ...] = ()
        for j in range(self.num_feedforward_networks - 1):
            width = self.intermediate_size
            projections += (
                Projection("up", f"ffn.{j}.intermediate.dense", inner, width, True, "ffn"),
                Projection("down", f"ffn.{j}.output.dense", width, inner, True, "ffn"),
            )
            norms += ((f"ffn.{j}.output.LayerNorm", self.norm(inner)),)
        if self.use_bottleneck:
            bottleneck = self.intra_bottleneck_size
            projections += (
                Projection("bottleneck", "bottleneck.input.dense", hidden, bottleneck, True, "other"),
                Projection("bottleneck", "output.bottleneck.dense", inner, hidden, True, "other"),
            )
            norms += (
                ("bottleneck.input.LayerNorm", self.norm(bottleneck)),
                ("output.bottleneck.LayerNorm", self.norm(hidden)),
            )
            if self.key_query_shared_bottleneck:
                if self.use_bottleneck_attention:  # built, never run: bottleneck.input feeds query, key and value
                    parameters += (
                        Parameter("other", "bottleneck", "bottleneck.attention.dense.weight", (bottleneck, hidden)),
                        Parameter("other", "bottleneck", "bottleneck.attention.dense.bias", (bottleneck,)),
                    )
                else:
                    projections += (
                        Projection("bottleneck", "bottleneck.attention.dense", hidden, bottleneck, True, "other"),
                    )
                norms += (("bottleneck.attention.LayerNorm", self.norm(bottleneck)),)
        name = f"{self.root}encoder.layer.{{i}}"
        return Layer(name, attention, ffn, norms, stack="encoder", parameters=parameters, projections=projections)

    def embeddings(self, width: int) -> list[Extra]:
        """The token-type table (hidden_size wide), embedding_transformation and the embeddings' norm."""
        root, hidden = self.root, self.hidden_size
        inputs = width * (3 if self.trigram_input else 1)
        transformation = f"{root}embeddings.embedding_transformation"
        if self.trigram_input or width != hidden:
            mapping = [Extra("embedding", transformation, Linear(inputs, hidden, bias=True))]
        else:  # built, never run: the word vectors are already hidden_size wide
            mapping = [
                Extra("embedding", f"{transformation}.weight", LearnedTensor((hidden, inputs))),
                Extra("embedding", f"{transformation}.bias", LearnedTensor((hidden,))),
            ]
        types = Table(self.type_vocab_size, hidden)
        return [
            Extra("embedding", f"{root}embeddings.token_type_embeddings", types),
            *mapping,
            Extra("norm", f"{root}embeddings.LayerNorm", self.norm(hidden)),
        ]

    def prediction_transform(self) -> list[Extra]:
        """The transform (dense hidden → hidden, a LayerNorm) and cls.predictions.dense, the rows of the head's weight
        past the word table's: vocab → hidden − embedding_size, no bias."""
        hidden = self.hidden_size
        return [
            Extra("lm_head", "cls.predictions.transform.dense", Linear(hidden, hidden, bias=True)),
            Extra("norm", "cls.predictions.transform.LayerNorm", Norm("layernorm", hidden, bias=True)),
            Extra("lm_head", "cls.predictions.dense", Linear(self.vocab_size, hidden - self.embedding_size)),
        ]

    def to_spec(self) -> ModelSpec:
        mlm = self.has_mlm()
        stored, mlm_extras = self.masked_lm()
        width = self.embedding_width()
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(self.encoder_layer(),) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=stored,
            position_embeddings=self.max_position_embeddings,
            embedding_dim=width if width != self.hidden_size else None,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(self.embeddings(width) + self.head_extras() + (mlm_extras if mlm else [])),
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),),
        )
