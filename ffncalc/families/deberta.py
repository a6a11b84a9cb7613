"""Microsoft's DeBERTa (model_type deberta) and DeBERTa-v2 and -v3 (deberta-v2): BERT's post-LN encoder with
disentangled attention, where queries and keys also score a table of relative positions."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, WidthOrZero, derives
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
    Parameter,
    Table,
    names,
)
from .bert import BERT_MLP, EncoderClasses
from .blocks import heads_divide
from .registry import family

DEBERTA_ATTENTION = names(
    q="attention.self.query_proj",
    k="attention.self.key_proj",
    v="attention.self.value_proj",
    o="attention.output.dense",
)
# DeBERTa v1 fuses q, k and v in one projection without a bias (its q_bias and v_bias are tensors of their own)
DEBERTA_V1_ATTENTION = names(
    q="attention.self.in_proj",
    k="attention.self.in_proj",
    v="attention.self.in_proj",
    o="attention.output.dense",
)

# DeBERTa-v2's classes: (masked-LM head, pooler, classifier outputs).
DEBERTA_HEADS: dict[str, tuple[bool, bool, int | str | None]] = {
    "Model": (False, False, None),
    "ForMaskedLM": (True, False, None),
    "ForSequenceClassification": (False, True, "labels"),
    "ForMultipleChoice": (False, True, 1),
    "ForTokenClassification": (False, False, "labels"),
    "ForQuestionAnswering": (False, False, "labels"),
}


class _DisentangledEncoder(EncoderClasses):
    """What DeBERTa and DeBERTa-v2 share: the embeddings, the relative-position table, the heads and their fields."""

    base_model_prefix = "deberta"
    classes = frozenset(DEBERTA_HEADS)
    read_beyond = {
        "num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label",
        "embedding_size": "no field: the modeling code reads it with getattr",
        "pooler_hidden_size": "no field: __post_init__ takes it from the config's keys",
    }

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    type_vocab_size: WidthOrZero
    relative_attention: Flag
    max_relative_positions: Annotated[int, Field(strict=True, le=1 << 26)]
    position_biased_input: Flag
    pos_att_type: Name | list[Name] | None
    legacy: Flag
    tie_word_embeddings: Flag
    embedding_size: Width | None = None
    pooler_hidden_size: Width | None = None

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    def unused_fields(self) -> set[str]:
        unused = {"pooler_hidden_size"} if not DEBERTA_HEADS[self.head_class()][1] else set()
        if not self.relative_attention:
            unused |= {"max_relative_positions", "pos_att_type"}
        return unused

    @property
    @derives("embedding_size", "hidden_size")
    def width(self) -> int:
        """The embedding tables' width."""
        return self.embedding_size or self.hidden_size

    @property
    @derives("pooler_hidden_size", "hidden_size")
    def pooler_width(self) -> int:
        return self.pooler_hidden_size or self.hidden_size

    def position_terms(self) -> list[str]:
        """The relative terms each layer adds to its scores: "c2p", "p2c" (pos_att_type, a list or "p2c|c2p")."""
        kinds = self.pos_att_type or []
        if isinstance(kinds, str):
            kinds = [kind.strip() for kind in kinds.lower().split("|")]
        return [term for term in ("c2p", "p2c") if term in kinds] if self.relative_attention else []

    def span(self) -> int:
        """The relative positions either side: max_relative_positions, else max_position_embeddings."""
        return self.max_relative_positions if self.max_relative_positions >= 1 else self.max_position_embeddings

    def layer_norm(self, dim: int | None = None) -> Norm:
        return Norm("layernorm", dim or self.hidden_size, bias=True)

    def relative_flops(self, head_size: int) -> int:
        """Each relative term (c2p, p2c) per token and layer: 2 · heads · head size · 2 · span, its query against every
        relative position's key (or its key against every relative position's query)."""
        return len(self.position_terms()) * 2 * self.num_attention_heads * head_size * 2 * self.span()

    def layer(self, root: str) -> Layer:  # pragma: no cover - each version builds its own
        raise NotImplementedError

    def encoder_extras(self, root: str) -> list[Extra]:
        """What the encoder holds beside its layers: the relative-position table (2 · span rows) when relative_attention."""
        if not self.relative_attention:
            return []
        return [Extra("other", f"{root}encoder.rel_embeddings", Table(2 * self.span(), self.hidden_size))]

    def head_extras(self) -> list[Extra]:
        hidden, width = self.hidden_size, self.width
        mlm, pooler, classifier = DEBERTA_HEADS[self.head_class()]
        extras: list[Extra] = []
        if mlm and self.legacy:
            extras.append(Extra("lm_head", "cls.predictions.transform.dense", Linear(hidden, width, bias=True)))
            extras.append(Extra("norm", "cls.predictions.transform.LayerNorm", self.layer_norm(width)))
            if not self.tie_word_embeddings:
                extras.append(Extra("lm_head", "cls.predictions.decoder.bias", LearnedTensor((self.vocab_size,))))
        elif mlm:  # scores against the word table itself, whatever tie_word_embeddings says
            extras.append(Extra("lm_head", "lm_predictions.lm_head.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "lm_predictions.lm_head.LayerNorm", self.layer_norm()))
        if pooler:
            size = self.pooler_width
            extras.append(self.linear("pooler.dense", size, size))
        if classifier is not None:
            module = "qa_outputs" if self.head_class() == "ForQuestionAnswering" else "classifier"
            extras.append(self.linear(module, hidden, classifier if isinstance(classifier, int) else self.labels()))
        return extras

    def to_spec(self) -> ModelSpec:
        root, hidden, width = self.root, self.hidden_size, self.width
        extras: list[Extra] = []
        if self.position_biased_input:
            extras.append(
                Extra("embedding", f"{root}embeddings.position_embeddings", Table(self.max_position_embeddings, width))
            )
        if self.type_vocab_size > 0:
            extras.append(
                Extra("embedding", f"{root}embeddings.token_type_embeddings", Table(self.type_vocab_size, width))
            )
        if width != hidden:  # transformers' component names put it with the embeddings it belongs to
            extras.append(Extra("embedding", f"{root}embeddings.embed_proj", Linear(width, hidden)))
        extras.append(Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm()))
        extras += self.encoder_extras(root)
        mlm = DEBERTA_HEADS[self.head_class()][0]
        legacy_mlm = mlm and self.legacy
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(self.layer(root),) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings or not legacy_mlm,
            names=ModelNames(
                f"{root}embeddings.word_embeddings",
                "",
                lm_head="cls.predictions.decoder" if legacy_mlm else "lm_predictions.lm_head.decoder",
                base_model_prefix=self.base_model_prefix,
                lm_head_bias="cls.predictions.bias" if legacy_mlm else "lm_predictions.lm_head.bias",
            ),
            embedding_dim=width if width != hidden else None,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(extras + self.head_extras()),
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),),
        )


@family(
    "deberta",
    transformers="DebertaConfig",
    architecture="DeBERTa",
    model_class="DebertaForMaskedLM",
    read_beyond={"talking_head": "read by the modeling code with getattr; DebertaConfig has no such field"},
)
class DebertaConfig(_DisentangledEncoder):
    """configuration_deberta.py / modeling_deberta.py (DeBERTa v1: microsoft/deberta-base, -large).

    Embeddings, relative-position table and heads as DeBERTa-v2's (below), but no multiple-choice class. Layers
    (post-LN): q, k and v fused in one in_proj without a bias (hidden → 3 · hidden), with q_bias and v_bias beside it;
    the output dense and BERT's MLP with biases. With relative_attention each layer projects the 2 · span relative
    embeddings with pos_proj (no bias, for "c2p") and pos_q_proj ("p2c"); span is max_relative_positions, else
    max_position_embeddings. talking_head (a key the modeling code reads with getattr) adds head_logits_proj and
    head_weights_proj, heads × heads each, without biases.

    FLOPs: the relative terms as DeBERTa-v2's. The talking heads mix the heads of every query-key score and of every
    attention weight: 2 · heads² FLOPs each per query-key pair, which ffncalc's per-key attention cost does not hold:
    they are left out of the FLOPs, and a note says so.
    """

    class_prefix = "Deberta"
    classes = frozenset(DEBERTA_HEADS) - {"ForMultipleChoice"}

    talking_head: Flag = False

    def notes(self) -> list[str]:
        if not self.talking_head:
            return super().notes()
        return [
            *super().notes(),
            "talking_head: the head-mixing projections' 2 · heads² FLOPs per query-key pair, twice a layer, are not in "
            "the FLOPs (their parameters are counted).",
        ]

    def layer(self, root: str) -> Layer:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_size = hidden // heads
        attention = Attention(hidden, heads, heads, head_size, head_size, DEBERTA_V1_ATTENTION, o_bias=True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms = (("attention.output.LayerNorm", self.layer_norm()), ("output.LayerNorm", self.layer_norm()))
        parameters = [
            Parameter("attention", "q_bias", "attention.self.q_bias", (hidden,)),
            Parameter("attention", "v_bias", "attention.self.v_bias", (hidden,)),
        ]
        # run over the relative embeddings once per forward pass, not per token
        terms = self.position_terms()
        if "c2p" in terms:
            parameters.append(Parameter("attention", "pos_proj", "attention.self.pos_proj.weight", (hidden, hidden)))
        if "p2c" in terms:
            parameters.append(
                Parameter("attention", "pos_q_proj", "attention.self.pos_q_proj.weight", (hidden, hidden))
            )
            parameters.append(Parameter("attention", "pos_q_proj", "attention.self.pos_q_proj.bias", (hidden,)))
        if self.talking_head:  # they mix scores, not tokens: no FLOPs per token here (see the class's docstring)
            for module in ("head_logits_proj", "head_weights_proj"):
                parameters.append(Parameter("attention", module, f"attention.self.{module}.weight", (heads, heads)))
        return Layer(
            f"{root}encoder.layer.{{i}}",
            attention,
            ffn,
            norms,
            stack="encoder",
            parameters=tuple(parameters),
            other_flops=self.relative_flops(head_size),
        )


@family(
    "deberta-v2",
    transformers="DebertaV2Config",
    architecture="DeBERTa-v2",
    model_class="DebertaV2ForMaskedLM",
    read_beyond=dict.fromkeys(
        ("attention_head_size", "share_att_key", "position_buckets", "norm_rel_ebd", "conv_kernel_size", "conv_groups"),
        "read by the modeling code with getattr; DebertaV2Config has no such field",
    ),
)
class DebertaV2Config(_DisentangledEncoder):
    """configuration_deberta_v2.py / modeling_deberta_v2.py.

    Embeddings: a word table embedding_size wide (hidden_size unless the config says), a position table
    when position_biased_input, a token-type table when type_vocab_size > 0, embed_proj (no bias) to
    hidden_size when the widths differ, and a LayerNorm. Layers (post-LN): query_proj, key_proj,
    value_proj of heads · attention_head_size (hidden_size // heads unless the config says), the output
    dense (hidden → hidden) and BERT's MLP, with biases. With relative_attention the encoder holds
    rel_embeddings, 2 · span rows (span: position_buckets when > 0, else max_relative_positions, else
    max_position_embeddings), normalised by a LayerNorm when norm_rel_ebd says "layer_norm"; each layer
    projects them with pos_key_proj (for "c2p" in pos_att_type) and pos_query_proj ("p2c") unless
    share_att_key reuses key_proj and query_proj. conv_kernel_size > 0 adds a convolution (conv.conv,
    hidden → hidden over conv_kernel_size positions, conv_groups groups) and its LayerNorm after the first
    layer.

    FLOPs: the relative terms cost each token, per layer and per term (c2p, p2c), 2 · heads ·
    attention_head_size · 2 · span (its query against every relative position's key, or its key against
    every relative position's query), counted under other. The projections of the 2 · span relative
    embeddings run once per forward pass, whatever its length: their weights are not charged per token.
    """

    class_prefix = "DebertaV2"

    attention_head_size: Width | None = None
    share_att_key: Flag = False
    position_buckets: int = Field(-1, strict=True, le=1 << 26)
    norm_rel_ebd: Name = "none"
    conv_kernel_size: int = Field(0, strict=True, le=1 << 10)
    conv_groups: Width = 1

    @model_validator(mode="after")
    def _check_conv_groups(self) -> DebertaV2Config:
        if self.conv_kernel_size > 0 and self.hidden_size % self.conv_groups:
            raise ValueError(f"hidden_size ({self.hidden_size}) is not a multiple of conv_groups ({self.conv_groups})")
        return self

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields()
        if not self.relative_attention:
            unused |= {"position_buckets", "share_att_key"}
        if self.conv_kernel_size <= 0:
            unused.add("conv_groups")
        return unused

    @property
    @derives("attention_head_size", "hidden_size // num_attention_heads")
    def head_size(self) -> int:
        return self.attention_head_size or self.hidden_size // self.num_attention_heads

    def span(self) -> int:
        """The relative positions either side: position_buckets, else max_relative_positions, else max_position_embeddings."""
        return self.position_buckets if self.position_buckets > 0 else super().span()

    def layer(self, root: str) -> Layer:
        hidden, heads, head_size = self.hidden_size, self.num_attention_heads, self.head_size
        attention = Attention(
            hidden,
            heads,
            heads,
            head_size,
            head_size,
            DEBERTA_ATTENTION,
            True,
            True,
            True,
            True,
            o_input=hidden if heads * head_size != hidden else None,  # the output dense is hidden → hidden
        )
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms = (("attention.output.LayerNorm", self.layer_norm()), ("output.LayerNorm", self.layer_norm()))
        projections: list[Parameter] = []  # run over the relative embeddings once per forward pass, not per token
        terms = self.position_terms()
        if not self.share_att_key:
            for term, module in (("c2p", "pos_key_proj"), ("p2c", "pos_query_proj")):
                if term in terms:
                    name = f"attention.self.{module}"
                    projections.append(Parameter("attention", module, name + ".weight", (heads * head_size, hidden)))
                    projections.append(Parameter("attention", module, name + ".bias", (heads * head_size,)))
        return Layer(
            f"{root}encoder.layer.{{i}}",
            attention,
            ffn,
            norms,
            stack="encoder",
            parameters=tuple(projections),
            other_flops=self.relative_flops(head_size),
        )

    def encoder_extras(self, root: str) -> list[Extra]:
        """The relative-position table, its LayerNorm (norm_rel_ebd "layer_norm") and the convolution after the first
        layer (conv_kernel_size > 0)."""
        hidden = self.hidden_size
        extras = super().encoder_extras(root)
        if "layer_norm" in [kind.strip() for kind in self.norm_rel_ebd.lower().split("|")]:
            extras.append(Extra("norm", f"{root}encoder.LayerNorm", self.layer_norm()))
        if self.conv_kernel_size > 0:  # a convolution is a token mixer: transformers' component names say "mixer"
            shape = (hidden, hidden // self.conv_groups, self.conv_kernel_size)
            extras.append(Extra("mixer", f"{root}encoder.conv.conv.weight", LearnedTensor(shape, matmul=True)))
            extras.append(Extra("mixer", f"{root}encoder.conv.conv.bias", LearnedTensor((hidden,))))
            extras.append(Extra("norm", f"{root}encoder.conv.LayerNorm", self.layer_norm()))
        return extras
