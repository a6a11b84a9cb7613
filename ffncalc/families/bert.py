"""BERT and the encoders that keep its layout: embeddings with token types, post-LN layers, and the heads of
whichever class the checkpoint was saved from. RoBERTa and XLM-RoBERTa (BERT's layout, their own heads),
ELECTRA (embeddings narrower than the layers, a generator or a discriminator head) and DistilBERT (no token
types, its own module names)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, WidthOrZero, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    Norms,
    Parameter,
    Runs,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .blocks import heads_divide
from .registry import family

BERT_ATTENTION = names(
    q="attention.self.query", k="attention.self.key", v="attention.self.value", o="attention.output.dense"
)
BERT_CROSS_ATTENTION = names(
    q="crossattention.self.query",
    k="crossattention.self.key",
    v="crossattention.self.value",
    o="crossattention.output.dense",
)
BERT_MLP = names(up="intermediate.dense", down="output.dense")
DISTILBERT_ATTENTION = names(q="attention.q_lin", k="attention.k_lin", v="attention.v_lin", o="attention.out_lin")
DISTILBERT_MLP = names(up="ffn.lin1", down="ffn.lin2")

# What each BERT class adds to the encoder: (pooler, masked-LM head, next-sentence head, classifier outputs).
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
    "ForQuestionAnswering": (False, False, False, "labels"),
}


class EncoderClasses(HFConfig):
    """What every encoder of the lineage shares: the class named in ``architectures`` decides the heads (the
    family's default class when it names none the family has), and classifiers are num_labels wide
    (len(id2label), else a num_labels key, else 2, as PreTrainedConfig sets it)."""

    class_prefix: ClassVar[str] = ""
    base_model_prefix: ClassVar[str] = ""
    classes: ClassVar[frozenset[str]] = frozenset()  # the class names (without the prefix) the family has
    default_labels: ClassVar[int] = 2
    read_beyond = {"num_labels": "not a field: PreTrainedConfig turns a num_labels key into id2label"}
    informational_fields = frozenset({"pad_token_id"})
    # the classes whose classifier is num_labels wide
    labelled_classes: ClassVar[frozenset[str]] = frozenset(
        {"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering"}
    )

    vocab_size: int | None  # declared, with its default, by each family (ESM's may be null)
    id2label: dict[str, Name] | None
    num_labels: int | None = Field(None, strict=True, ge=0, le=1 << 20)
    pad_token_id: Annotated[int | None, Field(strict=True)]  # the token table's padding row: it must be a row of it

    @model_validator(mode="after")
    def _check_padding_row(self) -> EncoderClasses:
        vocab = self.vocab_size
        if vocab is not None and self.pad_token_id is not None and not -vocab <= self.pad_token_id < vocab:
            raise ValueError(
                f"pad_token_id ({self.pad_token_id}) is not a row of the embedding table (vocab_size {vocab}); "
                "torch refuses such a padding_idx"
            )
        return self

    @property
    def vocab_rows(self) -> int:
        """vocab_size, which every config gives (ESM's must: EsmConfig has no default, and ESM refuses a config
        without it)."""
        if self.vocab_size is None:  # pragma: no cover - refused when the config is read
            raise ValueError("vocab_size is missing")
        return self.vocab_size

    def defaults_used(self):
        skipped = {"id2label"} | (set() if self.labels_matter() else {"num_labels"})
        return [d for d in super().defaults_used() if d.field not in skipped]

    def labels_matter(self) -> bool:
        """Whether the counted class has a classifier num_labels wide (and the config says neither id2label nor num_labels)."""
        return self.head_class() in self.labelled_classes and self.id2label is None

    @derives("num_labels", "len(id2label), else 2")
    def labels(self) -> int:
        """The classifiers' width: len(id2label), or num_labels, or the family's default."""
        if self.id2label is not None:
            return len(self.id2label)
        return self.num_labels if self.num_labels is not None else self.default_labels

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    def head_class(self) -> str:
        """The counted class without the family's prefix: "ForMaskedLM", "Model" …"""
        return self.model_class().removeprefix(self.class_prefix)

    @property
    def root(self) -> str:
        """Where the encoder's modules are stored: under base_model_prefix in a class with heads ("bert."), at
        the top in the bare model ("")."""
        return "" if self.head_class() == "Model" else self.base_model_prefix + "."

    def position_ids(self, rows: int) -> CheckpointExtra:
        """The embeddings' position_ids buffer, [1, max_position_embeddings] integers (roberta-base stores its I64 514)."""
        return CheckpointExtra(
            name="embeddings.position_ids buffer",
            reason=f"1 × {rows:,} position indices: a persistent buffer before transformers 4.31, so stored by checkpoints saved then",
            tensors=(StoredTensor(f"{self.root}embeddings.position_ids", (1, rows)),),
            likely=self.written_before(4, 31),
        )

    def encoder_spec(
        self,
        layer: Layer,
        count: int,
        hidden: int,
        extras: list[Extra],
        *,
        tie: bool,
        lm_head: str,
        mlm: bool,
        head_bias: bool = False,
        lm_head_bias: str = "",
        positions: bool = True,
        **fields: Any,
    ) -> ModelSpec:
        """An encoder-only model: COUNT copies of LAYER after the token table under the family's root (and its learned
        positions), no final norm, with the masked-LM head at LM_HEAD when MLM (with HEAD_BIAS a bias, stored at
        LM_HEAD_BIAS where not beside the weight)."""
        root = self.root
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_rows,
            layers=(layer,) * count,
            final_norm=None,
            tie_word_embeddings=tie,
            names=ModelNames(
                f"{root}embeddings.word_embeddings",
                "",
                lm_head=lm_head,
                position_embeddings=f"{root}embeddings.position_embeddings" if positions else "",
                base_model_prefix=self.base_model_prefix,
                lm_head_bias=lm_head_bias,
            ),
            lm_head=mlm,
            lm_head_bias=head_bias,
            extras=tuple(extras),
            **fields,
        )

    def linear(self, name: str, in_features: int, out_features: int) -> Extra:
        """A head's linear layer with its bias (a pooler, a classifier): it reads a sequence's summary, not each token."""
        return Extra("other", name, Linear(in_features, out_features, bias=True), "not_generating")

    def notes(self) -> list[str]:
        counted = self.model_class()
        if not self.architectures:
            return [
                f"The config names no class (architectures); counted as {counted}, ffncalc's default for {self.architecture}."
            ]
        if counted != self.architectures[0]:
            return [f"{self.architectures[0]} is not a {self.architecture} class ffncalc knows; counted as {counted}."]
        return []


class BertLayers(EncoderClasses):
    """BERT's fields, defaults and builders without its decoder switches or its token-type table: what BertLayout
    shares with TAPAS (seven token-type tables of its own sizes)."""

    # Where a layer keeps its LayerNorms, by the sublayer they belong to: post-LN BERT normalises each sublayer's
    # output; the pre-LN descendants (Megatron-BERT, RoBERTa-PreLayerNorm, XLM-RoBERTa-XL) its input, under names
    # of their own. The same parameters either way; only where they are stored differs.
    attention_norm: ClassVar[str] = "attention.output.LayerNorm"
    ffn_norm: ClassVar[str] = "output.LayerNorm"
    cross_attention_norm: ClassVar[str] = "crossattention.output.LayerNorm"
    embeddings_norm: ClassVar[bool] = True  # a LayerNorm on the summed embeddings
    absolute_positions: ClassVar[bool] = True  # a learned position table (RoFormer rotates queries and keys instead)
    encoder_norm: ClassVar[str] = ""  # a LayerNorm after the last layer (pre-LN encoders): its module under the root
    bert_heads: ClassVar[dict[str, tuple[bool, bool, bool, int | str | None]]] = HEADS  # what each class adds

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    tie_word_embeddings: Flag

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    def cross_attends(self) -> bool:
        """Whether each layer also attends to an encoder's states (a decoder with add_cross_attention)."""
        return False

    def heads(self) -> tuple[bool, bool, bool, int | None]:
        """(pooler, masked-LM head, next-sentence head, classifier width) of the class counted."""
        pooler, mlm, nsp, classifier = self.bert_heads[self.head_class()]
        if classifier == "labels":
            classifier = self.labels()
        return pooler, mlm, nsp, classifier if isinstance(classifier, int) else None

    def layer_norm(self, dim: int | None = None) -> Norm:
        return Norm("layernorm", dim or self.hidden_size, bias=True)

    def encoder_layer(self) -> Layer:
        """Post-LN: attention then its LayerNorm, the MLP then its LayerNorm (and cross-attention between)."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, BERT_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms: Norms = ((self.attention_norm, self.layer_norm()), (self.ffn_norm, self.layer_norm()))
        cross = None
        if self.cross_attends():
            cross = Attention(hidden, heads, heads, head_dim, head_dim, BERT_CROSS_ATTENTION, True, True, True, True)
            norms += ((self.cross_attention_norm, self.layer_norm()),)
        return Layer(f"{self.root}encoder.layer.{{i}}", attention, ffn, norms, cross_attention=cross, stack="encoder")

    def token_types(self, width: int) -> list[Extra]:
        """The token-type tables, WIDTH wide."""
        return []

    def embeddings(self, width: int) -> list[Extra]:
        """The token-type tables and the embeddings' LayerNorm (the word table is the spec's, and so is the position
        table when it is hidden_size wide)."""
        root = self.root
        extras = self.token_types(width)
        if self.embeddings_norm:
            extras.append(Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm(width)))
        if width != self.hidden_size and self.absolute_positions:
            positions = Table(self.max_position_embeddings, width)
            extras.insert(0, Extra("embedding", f"{root}embeddings.position_embeddings", positions))
        return extras

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        pooler, mlm, nsp, classifier = self.heads()
        extras = []
        if pooler:
            extras.append(self.linear(f"{self.root}pooler.dense", hidden, hidden))
        if mlm:
            extras += self.prediction_transform()
        if nsp:
            extras.append(self.linear("cls.seq_relationship", hidden, 2))
        if classifier is not None:
            module = "qa_outputs" if self.head_class() == "ForQuestionAnswering" else "classifier"
            extras.append(self.linear(module, hidden, classifier))
        return extras

    def prediction_transform(self) -> list[Extra]:
        """The masked-LM head's transform: cls.predictions.transform's dense (hidden → the word table's width) and LayerNorm."""
        width = self.embedding_width()
        return [
            Extra("lm_head", "cls.predictions.transform.dense", Linear(self.hidden_size, width, bias=True)),
            Extra("norm", "cls.predictions.transform.LayerNorm", self.layer_norm(width)),
        ]

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        """Where the masked-LM head keeps its decoder and its bias; untied, the decoder has a bias of its own too."""
        decoder, bias = "cls.predictions.decoder", "cls.predictions.bias"
        extras = (
            [] if self.tie_word_embeddings else [Extra("lm_head", decoder + ".bias", LearnedTensor((self.vocab_size,)))]
        )
        return self.model_names(decoder, bias), extras

    def model_names(self, decoder: str, bias: str) -> ModelNames:
        """The word and position tables under the encoder's root; the masked-LM decoder and its bias."""
        return ModelNames(
            f"{self.root}embeddings.word_embeddings",
            f"{self.root}{self.encoder_norm}" if self.encoder_norm else "",
            lm_head=decoder,
            position_embeddings=f"{self.root}embeddings.position_embeddings",
            base_model_prefix=self.base_model_prefix,
            lm_head_bias=bias,
        )

    def has_mlm(self) -> bool:
        return self.heads()[1]

    def embedding_width(self) -> int:
        """The width of the word, position and token-type tables."""
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        mlm = self.has_mlm()
        stored, mlm_extras = self.masked_lm()
        width = self.embedding_width()
        learned = self.absolute_positions and width == self.hidden_size  # a narrower position table is an extra
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(self.encoder_layer(),) * self.num_hidden_layers,
            final_norm=self.layer_norm() if self.encoder_norm else None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=stored,
            position_embeddings=self.max_position_embeddings if learned else 0,
            embedding_dim=width if width != self.hidden_size else None,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(self.embeddings(width) + self.head_extras() + (mlm_extras if mlm else [])),
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),) if self.absolute_positions else (),
        )


class BertLayout(BertLayers):
    """BERT's fields, defaults and builders without its decoder switches: what BertConfig shares with the encoders
    that copy its modules but never attend to an encoder's states (LayoutLM)."""

    type_vocab_size: Width

    def token_types(self, width: int) -> list[Extra]:
        """One token-type table of type_vocab_size rows."""
        return [Extra("embedding", f"{self.root}embeddings.token_type_embeddings", Table(self.type_vocab_size, width))]


@family("bert", transformers="BertConfig", architecture="BERT", model_class="BertForPreTraining")
class BertConfig(BertLayout):
    """configuration_bert.py / modeling_bert.py.

    Embeddings: word, position and token-type tables and a LayerNorm. Layers (post-LN): q, k, v and
    output dense with biases, then LayerNorm; intermediate and output dense with biases, then
    LayerNorm; a decoder (is_decoder) with add_cross_attention also attends to an encoder's states
    (crossattention: the same four projections and a LayerNorm). The class in ``architectures`` decides
    the heads, as transformers builds it: a pooler (dense + tanh), the masked-LM head (a dense transform,
    a LayerNorm, and a decoder tied to the word table, with its own bias beside the head's), the
    next-sentence head (dense to 2), or a classifier.
    """

    class_prefix = "Bert"
    base_model_prefix = "bert"
    classes = frozenset(HEADS)

    is_decoder: Flag
    add_cross_attention: Flag

    @model_validator(mode="after")
    def _check_cross_attention(self) -> BertConfig:
        if self.add_cross_attention and not self.is_decoder:
            raise ValueError(
                "add_cross_attention: cross-attention needs is_decoder (transformers refuses it otherwise)"
            )
        return self

    def cross_attends(self) -> bool:
        return self.add_cross_attention


@family(
    "megatron-bert",
    transformers="MegatronBertConfig",
    architecture="Megatron-BERT",
    model_class="MegatronBertForPreTraining",
)
class MegatronBertConfig(BertConfig):
    """configuration_megatron_bert.py / modeling_megatron_bert.py (NVIDIA's Megatron-BERT): BERT's classes and
    heads under bert.*, pre-LN: a LayerNorm before attention (attention.ln), one before the MLP (ln), one before
    cross-attention (crossattention.ln) and one after the last layer (encoder.ln); none on the embeddings."""

    class_prefix = "MegatronBert"
    classes = frozenset(HEADS) - {"LMHeadModel"}
    attention_norm = "attention.ln"
    ffn_norm = "ln"
    cross_attention_norm = "crossattention.ln"
    embeddings_norm = False
    encoder_norm = "encoder.ln"


@family("ernie", transformers="ErnieConfig", architecture="ERNIE", model_class="ErnieForMaskedLM")
class ErnieConfig(BertConfig):
    """configuration_ernie.py / modeling_ernie.py (Baidu's ERNIE 1.0 to 3.0, nghuyong/ernie-*): BERT's model, classes
    and heads under ernie.* (no LMHeadModel), with a task-type table (task_type_vocab_size rows) in the embeddings when
    use_task_id."""

    class_prefix = "Ernie"
    base_model_prefix = "ernie"
    classes = frozenset(HEADS) - {"LMHeadModel"}

    task_type_vocab_size: Width
    use_task_id: Flag

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | (set() if self.use_task_id else {"task_type_vocab_size"})

    def embeddings(self, width: int) -> list[Extra]:
        extras = super().embeddings(width)
        if self.use_task_id:
            tasks = Table(self.task_type_vocab_size, width)
            extras.append(Extra("embedding", f"{self.root}embeddings.task_type_embeddings", tasks))
        return extras


# RoCBert's classes, as BERT's, but its pre-training head is the masked LM alone (no next-sentence head).
ROC_BERT_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    **{name: heads for name, heads in HEADS.items() if name not in ("LMHeadModel", "ForNextSentencePrediction")},
    "ForPreTraining": (True, True, False, None),
}


@family("roc_bert", transformers="RoCBertConfig", architecture="RoCBert", model_class="RoCBertForMaskedLM")
class RoCBertConfig(BertConfig):
    """configuration_roc_bert.py / modeling_roc_bert.py (WeChatAI's RoCBert, weiweishi/roc-bert-base-zh): BERT's layers,
    classes and heads under roc_bert.*, its pre-training head the masked LM alone. The embeddings also hold a
    pronunciation table (pronunciation_vocab_size × pronunciation_embed_dim) and a glyph-shape table (shape_vocab_size ×
    shape_embed_dim), built whether or not enable_pronunciation and enable_shape use them; with concat_input each token's
    word vector and the enabled ones are concatenated and mapped back to hidden_size (map_inputs_layer, biased),
    before the token-type and position tables are added."""

    class_prefix = "RoCBert"
    base_model_prefix = "roc_bert"
    classes = frozenset(ROC_BERT_HEADS)
    bert_heads = ROC_BERT_HEADS

    enable_pronunciation: Flag
    enable_shape: Flag
    pronunciation_embed_dim: Width
    pronunciation_vocab_size: Width
    shape_embed_dim: Width
    shape_vocab_size: Width
    concat_input: Flag

    @model_validator(mode="after")
    def _check_side_tables(self) -> RoCBertConfig:
        # both tables take pad_token_id as their padding_idx, which torch refuses outside the table
        for field in ("pronunciation_vocab_size", "shape_vocab_size"):
            rows = getattr(self, field)
            if self.pad_token_id is not None and not -rows <= self.pad_token_id < rows:
                raise ValueError(f"{field} ({rows}) has no row pad_token_id ({self.pad_token_id}); torch refuses it")
        return self

    def unused_fields(self) -> set[str]:
        # the tables are built either way; enable_* only widen map_inputs_layer, which concat_input builds
        return super().unused_fields() | (set() if self.concat_input else {"enable_pronunciation", "enable_shape"})

    def embeddings(self, width: int) -> list[Extra]:
        root = self.root
        pronunciation = Table(self.pronunciation_vocab_size, self.pronunciation_embed_dim)
        shape = Table(self.shape_vocab_size, self.shape_embed_dim)
        extras = [
            *super().embeddings(width),
            Extra("embedding", f"{root}embeddings.pronunciation_embed", pronunciation),
            Extra("embedding", f"{root}embeddings.shape_embed", shape),
        ]
        if self.concat_input:
            concatenated = (
                width
                + (self.pronunciation_embed_dim if self.enable_pronunciation else 0)
                + (self.shape_embed_dim if self.enable_shape else 0)
            )
            mapped = Linear(concatenated, self.hidden_size, bias=True)
            extras.append(Extra("embedding", f"{root}embeddings.map_inputs_layer", mapped))
        return extras


# LayoutLM's classes, as BERT's: every one holds the pooler (LayoutLMModel always builds it).
LAYOUTLM_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForMaskedLM": (True, True, False, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForTokenClassification": (True, False, False, "labels"),
    "ForQuestionAnswering": (True, False, False, "labels"),
}


@family("layoutlm", transformers="LayoutLMConfig", architecture="LayoutLM", model_class="LayoutLMForMaskedLM")
class LayoutLMConfig(BertLayout):
    """configuration_layoutlm.py / modeling_layoutlm.py (Microsoft's LayoutLM, v1): BERT's encoder and heads under
    layoutlm.*, never a decoder, with four more tables in the embeddings for a token's box on the page (x, y, h and
    w position embeddings, max_2d_position_embeddings rows each); the pooler in every class."""

    class_prefix = "LayoutLM"
    base_model_prefix = "layoutlm"
    classes = frozenset(LAYOUTLM_HEADS)
    bert_heads = LAYOUTLM_HEADS

    max_2d_position_embeddings: Width

    def embeddings(self, width: int) -> list[Extra]:
        extras = super().embeddings(width)
        for axis in "xyhw":
            table = Table(self.max_2d_position_embeddings, width)
            extras.append(Extra("embedding", f"{self.root}embeddings.{axis}_position_embeddings", table))
        return extras


# TAPAS's classes: (pooler, masked-LM head, next-sentence head, classifier outputs); its question-answering head,
# cell selection over the tokens, is TapasConfig's own.
TAPAS_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForMaskedLM": (False, True, False, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForQuestionAnswering": (True, False, False, None),
}


@family("tapas", transformers="TapasConfig", architecture="TAPAS", model_class="TapasForMaskedLM")
class TapasConfig(BertLayers):
    """configuration_tapas.py / modeling_tapas.py (Google's TAPAS, google/tapas-base-finetuned-wtq): BERT's encoder
    under tapas.* (post-LN; a decoder with add_cross_attention also attends to an encoder's states), whose embeddings
    add one token-type table per entry of type_vocab_sizes (token_type_embeddings_0 … _6: segment, column, row, rank
    …) instead of BERT's one; max_position_embeddings 1,024. Heads: BERT's masked-LM cls.predictions; the pooler
    and a classifier for sequences; for question answering the pooler and cell selection: output_weights and
    column_output_weights (a hidden_size vector each, every token multiplied by it; the columns' only with
    select_one_column), output_bias and column_output_bias (one value each), and aggregation_classifier on the pooled
    output when num_aggregation_labels > 0."""

    class_prefix = "Tapas"
    base_model_prefix = "tapas"
    classes = frozenset(TAPAS_HEADS)
    bert_heads = TAPAS_HEADS
    labelled_classes = frozenset({"ForSequenceClassification"})

    type_vocab_sizes: Annotated[list[Width], Field(min_length=1, max_length=64)]
    num_aggregation_labels: WidthOrZero
    select_one_column: Flag
    is_decoder: Flag
    add_cross_attention: Flag

    @model_validator(mode="after")
    def _check_cross_attention(self) -> TapasConfig:
        if self.add_cross_attention and not self.is_decoder:
            raise ValueError(
                "add_cross_attention: cross-attention needs is_decoder (transformers refuses it otherwise)"
            )
        return self

    def cross_attends(self) -> bool:
        return self.add_cross_attention

    def unused_fields(self) -> set[str]:
        answers = self.head_class() == "ForQuestionAnswering"
        return super().unused_fields() | (set() if answers else {"num_aggregation_labels", "select_one_column"})

    def token_types(self, width: int) -> list[Extra]:
        """One table per entry of type_vocab_sizes, token_type_embeddings_{i}."""
        root = self.root
        return [
            Extra("embedding", f"{root}embeddings.token_type_embeddings_{i}", Table(rows, width))
            for i, rows in enumerate(self.type_vocab_sizes)
        ]

    def head_extras(self) -> list[Extra]:
        extras = super().head_extras()
        if self.head_class() != "ForQuestionAnswering":
            return extras
        hidden = self.hidden_size
        columns: Runs = "every_token" if self.select_one_column else "not_generating"
        extras += [
            Extra("other", "output_weights", LearnedTensor((hidden,), matmul=True)),
            Extra("other", "column_output_weights", LearnedTensor((hidden,), matmul=True), columns),
            Extra("other", "output_bias", LearnedTensor(())),
            Extra("other", "column_output_bias", LearnedTensor(())),
        ]
        if self.num_aggregation_labels > 0:
            extras.append(self.linear("aggregation_classifier", hidden, self.num_aggregation_labels))
        return extras


# RoBERTa's classes: (pooler, masked-LM head, classifier) — its sequence classifier is a dense layer and out_proj.
ROBERTA_HEADS: dict[str, tuple[bool, bool, str | None]] = {
    "Model": (True, False, None),
    "ForMaskedLM": (False, True, None),
    "ForCausalLM": (False, True, None),
    "ForSequenceClassification": (False, False, "classifier.dense"),
    "ForMultipleChoice": (True, False, "classifier"),
    "ForTokenClassification": (False, False, "classifier"),
    "ForQuestionAnswering": (False, False, "qa_outputs"),
}


class RobertaLayout(BertLayout):
    """RoBERTa's fields, heads and checks without BERT's decoder switches: what RobertaConfig shares with the encoders
    that copy its modules but never attend to an encoder's states (I-BERT)."""

    classes = frozenset(ROBERTA_HEADS)

    @model_validator(mode="after")
    def _check_position_padding(self) -> RobertaLayout:
        positions = self.max_position_embeddings
        if self.pad_token_id is not None and not -positions <= self.pad_token_id < positions:
            raise ValueError(
                f"pad_token_id ({self.pad_token_id}) is not a row of the position table (max_position_embeddings "
                f"{positions}); torch refuses such a padding_idx"
            )
        return self

    def has_mlm(self) -> bool:
        return ROBERTA_HEADS[self.head_class()][1]

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        pooler, mlm, classifier = ROBERTA_HEADS[self.head_class()]
        extras = []
        if pooler:
            extras.append(self.linear(f"{self.root}pooler.dense", hidden, hidden))
        if mlm:
            extras.append(Extra("lm_head", "lm_head.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "lm_head.layer_norm", self.layer_norm()))
        if classifier == "classifier.dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier is not None:
            outputs = 1 if self.head_class() == "ForMultipleChoice" else self.labels()
            extras.append(self.linear(classifier, hidden, outputs))
        return extras

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        extras = (
            []
            if self.tie_word_embeddings
            else [Extra("lm_head", "lm_head.decoder.bias", LearnedTensor((self.vocab_size,)))]
        )
        return self.model_names("lm_head.decoder", "lm_head.bias"), extras


# LUKE's classes: (pooler, masked-LM heads, classifier module, its outputs: num_labels, or a fixed width).
LUKE_HEADS: dict[str, tuple[bool, bool, str | None, int | None]] = {
    "Model": (True, False, None, None),
    "ForMaskedLM": (True, True, None, None),
    "ForSequenceClassification": (True, False, "classifier", None),
    "ForTokenClassification": (False, False, "classifier", None),
    "ForQuestionAnswering": (False, False, "qa_outputs", None),
    "ForMultipleChoice": (True, False, "classifier", 1),
}
LUKE_ENTITY_QUERIES = ("w2e_query", "e2w_query", "e2e_query")


@family("luke", transformers="LukeConfig", architecture="LUKE", model_class="LukeForMaskedLM")
class LukeConfig(RobertaLayout):
    """configuration_luke.py / modeling_luke.py (Studio Ousia's LUKE, studio-ousia/luke-base): RoBERTa's post-LN
    encoder and word embeddings under luke.* (positions offset past the padding row), beside entity embeddings: an
    entity table (entity_vocab_size × entity_emb_size), entity_embedding_dense to hidden_size (no bias) when the two
    differ, a position and a token-type table and a LayerNorm. With use_entity_aware_attention each layer also holds a
    query for each pair of word and entity (w2e_query, e2w_query, e2e_query, biased), which run only for an input
    with entities. ffncalc counts a text of word tokens: the entity modules hold parameters, and no word token runs
    them. Heads: LukeForMaskedLM builds the pooler, lm_head (dense, layer_norm, and a decoder with its bias, never
    tied: its _tied_weights_keys hold only the head's bias and the entity decoder) and entity_predictions (transform
    dense to entity_emb_size, LayerNorm, a decoder tied to the entity table by tie_word_embeddings, and a bias);
    classifiers num_labels wide (one output for multiple choice), on the pooler for sequences and choices."""

    class_prefix = "Luke"
    base_model_prefix = "luke"
    classes = frozenset(LUKE_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering"})

    entity_vocab_size: Width
    entity_emb_size: Width
    use_entity_aware_attention: Flag

    def has_mlm(self) -> bool:
        return LUKE_HEADS[self.head_class()][1]

    def encoder_layer(self) -> Layer:
        """BERT's layer, and the entity-aware queries, which no word token runs."""
        layer = super().encoder_layer()
        if not self.use_entity_aware_attention:
            return layer
        hidden = self.hidden_size
        queries = tuple(
            Parameter("attention", query, f"attention.self.{query}.{tensor}", shape)
            for query in LUKE_ENTITY_QUERIES
            for tensor, shape in (("weight", (hidden, hidden)), ("bias", (hidden,)))
        )
        return replace(layer, parameters=queries)

    def embeddings(self, width: int) -> list[Extra]:
        """The word side's token-type table and LayerNorm; the entity side's tables, projection and LayerNorm, which
        run for entities only."""
        root, hidden, entity_width = f"{self.root}entity_embeddings.", self.hidden_size, self.entity_emb_size
        extras = [
            *super().embeddings(width),
            Extra("other", f"{root}entity_embeddings", Table(self.entity_vocab_size, entity_width)),
            Extra("embedding", f"{root}position_embeddings", Table(self.max_position_embeddings, hidden)),
            Extra("embedding", f"{root}token_type_embeddings", Table(self.type_vocab_size, hidden)),
            Extra("norm", f"{root}LayerNorm", self.layer_norm()),
        ]
        if entity_width != hidden:
            dense = Linear(entity_width, hidden)
            extras.append(Extra("other", f"{root}entity_embedding_dense", dense, "not_generating"))
        return extras

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        pooler, mlm, classifier, outputs = LUKE_HEADS[self.head_class()]
        extras = []
        if pooler:
            extras.append(self.linear(f"{self.root}pooler.dense", hidden, hidden))
        if mlm:
            width, entities = self.entity_emb_size, self.entity_vocab_size
            extras += [
                Extra("lm_head", "lm_head.dense", Linear(hidden, hidden, bias=True)),
                Extra("norm", "lm_head.layer_norm", self.layer_norm()),
                Extra("other", "entity_predictions.transform.dense", Linear(hidden, width, True), "not_generating"),
                Extra("norm", "entity_predictions.transform.LayerNorm", self.layer_norm(width)),
                Extra("other", "entity_predictions.bias", LearnedTensor((entities,))),
            ]
            if not self.tie_word_embeddings:
                decoder = LearnedTensor((entities, width))
                extras += [
                    Extra("other", "entity_predictions.decoder.weight", decoder),
                    Extra("lm_head", "lm_head.bias", LearnedTensor((self.vocab_size,))),
                ]
        if classifier is not None:
            extras.append(self.linear(classifier, hidden, outputs or self.labels()))
        return extras

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        return self.model_names("lm_head.decoder", "lm_head.decoder.bias"), []

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), tie_word_embeddings=False)


@family("roberta", transformers="RobertaConfig", architecture="RoBERTa", model_class="RobertaForMaskedLM")
class RobertaConfig(RobertaLayout, BertConfig):
    """configuration_roberta.py / modeling_roberta.py: BERT's encoder (positions offset past the padding
    row, which changes no shape) under roberta.*; the masked-LM head lm_head (dense, layer_norm, a decoder
    tied to the word table, and a bias lm_head.bias); a sequence classifier of a dense layer and out_proj
    on the first token, no pooler; a multiple-choice classifier (one output) on the pooler."""

    class_prefix = "Roberta"
    base_model_prefix = "roberta"


@family("xlm-roberta", transformers="XLMRobertaConfig", architecture="XLM-RoBERTa", model_class="XLMRobertaForMaskedLM")
class XLMRobertaConfig(RobertaConfig):
    """configuration_xlm_roberta.py / modeling_xlm_roberta.py: RoBERTa's model under its own class names
    (the checkpoints' modules are still roberta.*), with BERT's default vocabulary size."""

    class_prefix = "XLMRoberta"


@family("camembert", transformers="CamembertConfig", architecture="CamemBERT", model_class="CamembertForMaskedLM")
class CamembertConfig(XLMRobertaConfig):
    """configuration_camembert.py / modeling_camembert.py: XLM-RoBERTa's model (RoBERTa's layout under roberta.*,
    BERT's default vocabulary size) under CamemBERT's class names."""

    class_prefix = "Camembert"


@family(
    "data2vec-text",
    transformers="Data2VecTextConfig",
    architecture="Data2Vec-Text",
    model_class="Data2VecTextForMaskedLM",
)
class Data2VecTextConfig(XLMRobertaConfig):
    """configuration_data2vec_text.py / modeling_data2vec_text.py (Meta's data2vec, its text model): RoBERTa's model
    and heads (positions offset past the padding row), BERT's default vocabulary size, under data2vec_text.*."""

    class_prefix = "Data2VecText"
    base_model_prefix = "data2vec_text"


@family(
    "roberta-prelayernorm",
    transformers="RobertaPreLayerNormConfig",
    architecture="RoBERTa-PreLayerNorm",
    model_class="RobertaPreLayerNormForMaskedLM",
)
class RobertaPreLayerNormConfig(RobertaConfig):
    """configuration_roberta_prelayernorm.py / modeling_roberta_prelayernorm.py: RoBERTa's model and heads, pre-LN,
    under roberta_prelayernorm.*: a LayerNorm before attention (attention.LayerNorm), one before the MLP
    (intermediate.LayerNorm), one before cross-attention, and one after the last layer, held by the model itself
    (LayerNorm); the embeddings keep theirs."""

    class_prefix = "RobertaPreLayerNorm"
    base_model_prefix = "roberta_prelayernorm"
    attention_norm = "attention.LayerNorm"
    ffn_norm = "intermediate.LayerNorm"
    cross_attention_norm = "crossattention.LayerNorm"
    encoder_norm = "LayerNorm"


@family(
    "xlm-roberta-xl",
    transformers="XLMRobertaXLConfig",
    architecture="XLM-RoBERTa-XL",
    model_class="XLMRobertaXLForMaskedLM",
)
class XLMRobertaXLConfig(RobertaConfig):
    """configuration_xlm_roberta_xl.py / modeling_xlm_roberta_xl.py: RoBERTa's model and heads under roberta.*,
    pre-LN: a LayerNorm before attention (attention.self_attn_layer_norm, and crossattention's), one before the
    MLP (LayerNorm), one after the last layer (encoder.LayerNorm); none on the embeddings."""

    class_prefix = "XLMRobertaXL"
    attention_norm = "attention.self_attn_layer_norm"
    ffn_norm = "LayerNorm"
    cross_attention_norm = "crossattention.self_attn_layer_norm"
    embeddings_norm = False
    encoder_norm = "encoder.LayerNorm"


# ELECTRA's classes: (generator head, discriminator head, classifier).
ELECTRA_HEADS: dict[str, tuple[bool, bool, str | None]] = {
    "Model": (False, False, None),
    "ForPreTraining": (False, True, None),
    "ForMaskedLM": (True, False, None),
    "ForCausalLM": (True, False, None),
    "ForSequenceClassification": (False, False, "classifier.dense"),
    "ForMultipleChoice": (False, False, "sequence_summary"),
    "ForTokenClassification": (False, False, "classifier"),
    "ForQuestionAnswering": (False, False, "qa_outputs"),
}


class ElectraLayers(BertConfig):
    """configuration_electra.py / modeling_electra.py: BERT's encoder under electra.*, its embeddings
    (word, position, token type, LayerNorm) embedding_size wide and projected to hidden_size
    (embeddings_project) when the two differ; no pooler. A generator (ForMaskedLM) predicts tokens through
    generator_predictions (dense to embedding_size, LayerNorm) and generator_lm_head (tied to the word table,
    with its bias); a discriminator (ForPreTraining) scores each token: discriminator_predictions (dense,
    dense_prediction to 1). Classifiers: a dense layer and out_proj (sequences), sequence_summary and one
    output (multiple choice), or one layer (tokens, question answering)."""

    architecture = "ELECTRA"
    config_class = "ElectraConfig"
    default_model_class = "ElectraForMaskedLM"  # ElectraForCausalLM, what AutoModelForCausalLM builds, is the same
    class_prefix = "Electra"
    base_model_prefix = "electra"
    classes = frozenset(ELECTRA_HEADS)
    head_table: ClassVar[dict[str, tuple[bool, bool, str | None]]] = ELECTRA_HEADS
    read_beyond = {
        "num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label",
        "summary_proj_to_labels": "no field of ElectraConfig: its SequenceSummary reads it with getattr / hasattr",
        # RoFormerConfig declares none of the summary fields (ElectraConfig does: the record's defaults)
        "summary_type": "no field of RoFormerConfig: RoFormerSequenceSummary reads it with getattr",
        "summary_use_proj": "no field of RoFormerConfig: RoFormerSequenceSummary reads it with getattr",
    }

    summary_type: Name = "first"
    summary_use_proj: Flag = True
    summary_proj_to_labels: Flag = False

    @model_validator(mode="after")
    def _check_summary(self) -> ElectraLayers:
        if self.head_class() == "ForMultipleChoice" and self.summary_type == "attn":
            summary = f"{self.class_prefix}SequenceSummary"
            raise ValueError(f"summary_type: 'attn' is not implemented by transformers' {summary}")
        return self

    def labels_matter(self) -> bool:
        projected = self.head_class() == "ForMultipleChoice" and self.summary_use_proj and self.summary_proj_to_labels
        return super().labels_matter() or (projected and self.id2label is None)

    def unused_fields(self) -> set[str]:
        if self.head_class() == "ForMultipleChoice":
            return set()
        return {"summary_type", "summary_use_proj", "summary_proj_to_labels"}

    def embedding_width(self) -> int:  # pragma: no cover - ELECTRA and RoFormer each say
        raise NotImplementedError

    def has_mlm(self) -> bool:
        return self.head_table[self.head_class()][0]

    def embeddings(self, width: int) -> list[Extra]:
        extras = super().embeddings(width)
        if width != self.hidden_size:
            extras.append(Extra("other", f"{self.root}embeddings_project", Linear(width, self.hidden_size, bias=True)))
        return extras

    def prediction_transform(self) -> list[Extra]:
        """The generator's transform: generator_predictions' dense (hidden → embedding_size) and LayerNorm."""
        width = self.embedding_width()
        return [
            Extra("lm_head", "generator_predictions.dense", Linear(self.hidden_size, width, bias=True)),
            Extra("norm", "generator_predictions.LayerNorm", self.layer_norm(width)),
        ]

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        generator, discriminator, classifier = self.head_table[self.head_class()]
        extras = []
        if generator:
            extras += self.prediction_transform()
        if discriminator:
            extras.append(Extra("other", "discriminator_predictions.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("other", "discriminator_predictions.dense_prediction", Linear(hidden, 1, bias=True)))
        if classifier == "classifier.dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier == "sequence_summary":
            if self.summary_use_proj:
                labels = self.labels()
                outputs = labels if self.summary_proj_to_labels and labels > 0 else hidden
                extras.append(self.linear("sequence_summary.summary", hidden, outputs))
            extras.append(self.linear("classifier", hidden, 1))
        elif classifier is not None:
            extras.append(self.linear(classifier, hidden, self.labels()))
        return extras

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        return self.model_names("generator_lm_head", "generator_lm_head.bias"), []


@family("electra", transformers="ElectraConfig")
class ElectraConfig(ElectraLayers):
    """configuration_electra.py: ELECTRA's layers, their embeddings embedding_size wide (128)."""

    embedding_size: Width

    def embedding_width(self) -> int:
        return self.embedding_size


# RoFormer's classes: ELECTRA's (masked-LM head, —, classifier), with no discriminator.
ROFORMER_HEADS = {name: heads for name, heads in ELECTRA_HEADS.items() if name != "ForPreTraining"}


@family(
    "roformer",
    transformers="RoFormerConfig",
    architecture="RoFormer",
    model_class="RoFormerForMaskedLM",
    read_beyond={
        "num_labels": "RoFormerSequenceSummary reads them with getattr / hasattr: RoFormerConfig declares none of them",
        "summary_type": "RoFormerSequenceSummary reads them with getattr / hasattr: RoFormerConfig declares none of them",
        "summary_use_proj": "RoFormerSequenceSummary reads them with getattr / hasattr: RoFormerConfig declares none of them",
        "summary_proj_to_labels": "RoFormerSequenceSummary reads them with getattr / hasattr: RoFormerConfig declares none of them",
    },
)
class RoFormerConfig(ElectraLayers):
    """configuration_roformer.py / modeling_roformer.py (Zhuiyi's RoFormer), ELECTRA's model with rotary positions:
    word and token-type tables and a LayerNorm embedding_size wide (hidden_size unless the config says), projected to
    hidden_size (embeddings_project) when the two differ; no position table, but a sinusoidal table of
    max_position_embeddings × head size (encoder.embed_positions, a frozen parameter) that rotates queries and keys;
    BERT's post-LN layers; no pooler. Heads: BERT's masked-LM cls.predictions (transform dense to embedding_size,
    LayerNorm, a decoder tied to the word table, with its bias), ELECTRA's classifiers (a dense layer and out_proj for
    sequences; sequence_summary, a projection only when the config sets summary_use_proj, for multiple choice)."""

    class_prefix = "RoFormer"
    base_model_prefix = "roformer"
    classes = frozenset(ROFORMER_HEADS)
    head_table = ROFORMER_HEADS
    absolute_positions = False

    embedding_size: Width | None
    summary_type: Name = "last"
    summary_use_proj: Flag = False

    @derives("embedding_size", "hidden_size")
    def embedding_width(self) -> int:
        return self.embedding_size or self.hidden_size

    def embeddings(self, width: int) -> list[Extra]:
        head_size = self.hidden_size // self.num_attention_heads
        positions = Table(self.max_position_embeddings, head_size)
        return [*super().embeddings(width), Extra("embedding", f"{self.root}encoder.embed_positions", positions)]

    def prediction_transform(self) -> list[Extra]:
        return BertConfig.prediction_transform(self)

    def masked_lm(self) -> tuple[ModelNames, list[Extra]]:
        return BertConfig.masked_lm(self)


# DistilBERT's classes: (masked-LM head, pre_classifier, classifier outputs).
DISTILBERT_HEADS: dict[str, tuple[bool, bool, int | str | None]] = {
    "Model": (False, False, None),
    "ForMaskedLM": (True, False, None),
    "ForSequenceClassification": (False, True, "labels"),
    "ForMultipleChoice": (False, True, 1),
    "ForTokenClassification": (False, False, "labels"),
    "ForQuestionAnswering": (False, False, "labels"),
}


@family("distilbert", transformers="DistilBertConfig", architecture="DistilBERT", model_class="DistilBertForMaskedLM")
class DistilBertConfig(EncoderClasses):
    """configuration_distilbert.py / modeling_distilbert.py: word and position tables (learned, or
    initialised with sinusoids by sinusoidal_pos_embds: a parameter either way) and a LayerNorm, no token
    types; post-LN layers (attention q_lin, k_lin, v_lin, out_lin, sa_layer_norm; ffn lin1, lin2,
    output_layer_norm), all with biases. Heads: vocab_transform, vocab_layer_norm and vocab_projector (tied to
    the word table, with a bias) for masked LM; pre_classifier and classifier for sequences and multiple
    choice; a classifier for tokens; qa_outputs (2 outputs, which transformers requires) for answers."""

    class_prefix = "DistilBert"
    base_model_prefix = "distilbert"
    classes = frozenset(DISTILBERT_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification"})  # answers: 2, always

    vocab_size: Width
    max_position_embeddings: PositionCount
    n_layers: LayerCount
    n_heads: HeadCount
    dim: Width
    hidden_dim: Width
    activation: Name
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> DistilBertConfig:
        if self.dim % self.n_heads:
            raise ValueError(f"dim ({self.dim}) is not a multiple of n_heads ({self.n_heads})")
        if self.head_class() == "ForQuestionAnswering" and self.labels() != 2:
            raise ValueError(f"id2label: DistilBertForQuestionAnswering needs 2 labels, not {self.labels()}")
        return self

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.dim, bias=True)

    def to_spec(self) -> ModelSpec:
        dim, heads = self.dim, self.n_heads
        attention = Attention(
            dim, heads, heads, dim // heads, dim // heads, DISTILBERT_ATTENTION, True, True, True, True
        )
        ffn = DenseFfn(dim, self.hidden_dim, False, self.activation, DISTILBERT_MLP, bias=True)
        norms = (("sa_layer_norm", self.layer_norm()), ("output_layer_norm", self.layer_norm()))
        root = self.root
        layer = Layer(f"{root}transformer.layer.{{i}}", attention, ffn, norms, stack="encoder")
        mlm, pre_classifier, classifier = DISTILBERT_HEADS[self.head_class()]
        extras = [Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm())]
        if mlm:
            # the masked-LM head, as BERT's cls.predictions: a transform, its LayerNorm, the tied projector's bias
            extras.append(Extra("lm_head", "vocab_transform", Linear(dim, dim, bias=True)))
            extras.append(Extra("norm", "vocab_layer_norm", self.layer_norm()))
            extras.append(Extra("lm_head", "vocab_projector.bias", LearnedTensor((self.vocab_size,))))
        if pre_classifier:
            extras.append(self.linear("pre_classifier", dim, dim))
        if classifier is not None:
            module = "qa_outputs" if self.head_class() == "ForQuestionAnswering" else "classifier"
            extras.append(self.linear(module, dim, classifier if isinstance(classifier, int) else self.labels()))
        return self.encoder_spec(
            layer,
            self.n_layers,
            dim,
            extras,
            tie=self.tie_word_embeddings,
            lm_head="vocab_projector",
            mlm=mlm,
            position_embeddings=self.max_position_embeddings,
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),),
        )
