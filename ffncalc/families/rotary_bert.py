"""The BERT-shaped embedding encoders with rotary positions: Alibaba's GTE (gte-multilingual), Nomic BERT
(nomic-embed-text) and Jina Embeddings v3.

Each keeps BERT's post-LN layer and embeddings (word and token-type tables and a LayerNorm, no position table:
rotary), with fused q/k/v and its own MLP. transformers 5.24 renames their checkpoints' modules on load
(conversion_mapping.py) and back when it saves; ffncalc names the tensors as the checkpoints store them.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, WidthOrZero, derives
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Names,
    Norm,
    Parameter,
    Table,
    names,
)
from .bert import EncoderClasses
from .blocks import heads_divide
from .registry import family

Classifier = Literal["labels", "dense", "qa"] | None

# What each class adds to the encoder: (pooler, masked-LM head, classifier). "labels": one layer num_labels wide
# (classifier); "dense": RoBERTa's dense and out_proj (classifier.*); "qa": qa_outputs, num_labels wide.
GTE_HEADS: dict[str, tuple[bool, bool, Classifier]] = {
    "Model": (False, False, None),  # GteModel(add_pooling_layer=False)
    "ForMaskedLM": (False, True, None),
    "ForSequenceClassification": (True, False, "labels"),
    "ForTokenClassification": (False, False, "labels"),
}
NOMIC_HEADS = GTE_HEADS
JINA_HEADS: dict[str, tuple[bool, bool, Classifier]] = {
    "Model": (True, False, None),  # JinaEmbeddingsV3Model(add_pooling_layer=True)
    "ForMaskedLM": (False, True, None),
    "ForSequenceClassification": (False, False, "dense"),
    "ForTokenClassification": (False, False, "labels"),
    "ForQuestionAnswering": (False, False, "qa"),
}


class _RotaryEncoder(EncoderClasses):
    """The lineage's shared layout; each family says where its checkpoint keeps each part, and its biases."""

    heads: ClassVar[dict[str, tuple[bool, bool, Classifier]]] = GTE_HEADS
    read_beyond = {
        "tie_word_embeddings": "PreTrainedConfig's (true unless the config says) where the class declares none "
        "(NomicBertConfig)"
    }
    layer_name: ClassVar[str] = "encoder.layers.{i}"
    attention_names: ClassVar[Names] = names(q="attn.Wqkv", k="attn.Wqkv", v="attn.Wqkv", o="attn.out_proj")
    mlp_names: ClassVar[Names] = names(up="mlp.fc1", down="mlp.fc2")
    layer_norms: ClassVar[tuple[str, str]] = ("norm1", "norm2")  # after attention, after the MLP (post-LN)
    embeddings_norm_name: ClassVar[str] = "emb_ln"
    # The masked-LM head: its transform, the transform's LayerNorm, the tied decoder, and where its bias is stored
    # ("" when beside the decoder's weight).
    mlm_names: ClassVar[tuple[str, str, str, str]] = ("lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "")

    hidden_act: Name
    tie_word_embeddings: Flag = True

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    # declared by each family with its default
    hidden_size: int
    num_attention_heads: int
    num_hidden_layers: int
    intermediate_size: int
    type_vocab_size: int

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def attention(self) -> Attention:
        """q, k, v (fused) and o with biases, heads of hidden_size // heads (the modeling code's getattr default)."""
        heads = self.num_attention_heads
        width = self.hidden_size // heads
        return Attention(self.hidden_size, heads, heads, width, width, self.attention_names, True, True, True, True)

    def ffn(self) -> DenseFfn:
        return DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, bias=True)

    def layer_parameters(self) -> tuple[Parameter, ...]:
        """Learned tensors of a layer outside its blocks' switches (GTE's down_proj bias)."""
        return ()

    def to_spec(self) -> ModelSpec:
        root, hidden = self.root, self.hidden_size
        norms = tuple((name, self.layer_norm()) for name in self.layer_norms)
        layer = Layer(
            root + self.layer_name,
            self.attention(),
            self.ffn(),
            norms,
            stack="encoder",
            parameters=self.layer_parameters(),
        )
        pooler, mlm, classifier = self.heads[self.head_class()]
        extras: list[Extra] = []
        if self.type_vocab_size > 0:
            extras.append(
                Extra("embedding", f"{root}embeddings.token_type_embeddings", Table(self.type_vocab_size, hidden))
            )
        extras.append(Extra("norm", root + self.embeddings_norm_name, self.layer_norm()))
        if pooler:
            extras.append(self.linear(f"{root}pooler.dense", hidden, hidden))
        transform, transform_norm, decoder, bias = self.mlm_names
        if mlm:
            extras.append(Extra("lm_head", transform, Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", transform_norm, self.layer_norm()))
            if not self.tie_word_embeddings and bias:  # untied, the decoder keeps a bias of its own beside the head's
                extras.append(Extra("lm_head", decoder + ".bias", LearnedTensor((self.vocab_rows,))))
        if classifier == "dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier is not None:
            extras.append(self.linear("qa_outputs" if classifier == "qa" else "classifier", hidden, self.labels()))
        return self.encoder_spec(
            layer,
            self.num_hidden_layers,
            hidden,
            extras,
            tie=self.tie_word_embeddings,
            lm_head=decoder,
            mlm=mlm,
            head_bias=mlm,
            lm_head_bias=bias,
            positions=False,
        )


@family("gte", transformers="GteConfig", architecture="GTE", model_class="GteModel")
class GteConfig(_RotaryEncoder):
    """configuration_gte.py / modeling_gte.py (Alibaba-NLP's gte-multilingual, gte-v1.5).

    Embeddings: word and token-type tables (none when type_vocab_size is 0) and a LayerNorm. Layers (post-LN):
    qkv_proj and o_proj with biases, attn_ln; up_gate_proj (hidden → 2 · intermediate: the up half and the gate
    half, no bias) and down_proj (with a bias), mlp_ln. Heads: the masked-LM lm_head (dense, norm, a decoder tied
    to the word table with its own bias); a pooler and a classifier for sequences; a classifier for tokens.
    """

    class_prefix = "Gte"
    base_model_prefix = "gte"
    classes = frozenset(GTE_HEADS)
    heads = GTE_HEADS
    layer_name = "encoder.layer.{i}"
    attention_names = names(
        q="attention.qkv_proj", k="attention.qkv_proj", v="attention.qkv_proj", o="attention.o_proj"
    )
    mlp_names = names(gate="mlp.up_gate_proj", up="mlp.up_gate_proj", down="mlp.down_proj")
    layer_norms = ("attn_ln", "mlp_ln")
    embeddings_norm_name = "embeddings.LayerNorm"
    mlm_names = ("lm_head.dense", "lm_head.norm", "lm_head.decoder", "")

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    max_position_embeddings: PositionCount
    type_vocab_size: WidthOrZero

    def ffn(self) -> DenseFfn:
        """Gated, its gate and up projections without biases: down_proj's bias is a layer parameter."""
        return DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, self.mlp_names, bias=False)

    def layer_parameters(self) -> tuple[Parameter, ...]:
        return (Parameter("ffn", "down_bias", "mlp.down_proj.bias", (self.hidden_size,)),)


@family(
    "nomic_bert",
    transformers="NomicBertConfig",
    architecture="Nomic BERT",
    model_class="NomicBertModel",
    read_beyond={
        "num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label",
        "tie_word_embeddings": "NomicBertConfig declares no tie_word_embeddings: PreTrainedConfig's (true unless the config says) ties the head",
    },
)
class NomicBertConfig(_RotaryEncoder):
    """configuration_nomic_bert.py / modeling_nomic_bert.py (nomic-embed-text).

    Embeddings: word and token-type tables, emb_ln. Layers (post-LN), no biases: Wqkv (3 · heads · head_dim) and
    out_proj, norm1; fc11 (up), fc12 (gate) and fc2 (down), norm2. head_dim defaults to hidden_size // heads.
    Heads: BERT's masked-LM head under cls.predictions (transform.dense, transform.layer_norm, the tied decoder,
    the bias cls.predictions.bias); a pooler and a classifier for sequences; a classifier for tokens.
    """

    class_prefix = "NomicBert"
    base_model_prefix = "nomic_bert"
    classes = frozenset(NOMIC_HEADS)
    heads = NOMIC_HEADS
    mlp_names = names(gate="mlp.fc12", up="mlp.fc11", down="mlp.fc2")
    mlm_names = (
        "cls.predictions.transform.dense",
        "cls.predictions.transform.layer_norm",
        "cls.predictions.decoder",
        "cls.predictions.bias",
    )

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    max_position_embeddings: PositionCount
    type_vocab_size: Width
    head_dim: Width | None

    @property
    @derives("head_dim", "hidden_size // num_attention_heads")
    def resolved_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def attention(self) -> Attention:
        heads, head_dim = self.num_attention_heads, self.resolved_head_dim
        return Attention(self.hidden_size, heads, heads, head_dim, head_dim, self.attention_names)

    def ffn(self) -> DenseFfn:
        return DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, self.mlp_names, bias=False)


@family(
    "jina_embeddings_v3",
    transformers="JinaEmbeddingsV3Config",
    architecture="Jina Embeddings v3",
    model_class="JinaEmbeddingsV3Model",
)
class JinaEmbeddingsV3Config(_RotaryEncoder):
    """configuration_jina_embeddings_v3.py / modeling_jina_embeddings_v3.py: XLM-RoBERTa's vocabulary with rotary
    positions. Embeddings: word and token-type tables, emb_ln. Layers (post-LN), with biases: mixer.Wqkv and
    mixer.out_proj, norm1; fc1 and fc2, norm2. Heads as RoBERTa's, under roberta.*: a pooler on the bare model;
    the masked-LM lm_head (dense, layer_norm, the tied decoder, lm_head.bias); a dense layer and out_proj for
    sequences; a classifier for tokens; qa_outputs (num_labels) for answers. transformers builds no task LoRA
    adapters: the published checkpoint's adapters (remote code) are not counted.
    """

    class_prefix = "JinaEmbeddingsV3"
    base_model_prefix = "roberta"
    classes = frozenset(JINA_HEADS)
    heads = JINA_HEADS
    attention_names = names(q="mixer.Wqkv", k="mixer.Wqkv", v="mixer.Wqkv", o="mixer.out_proj")
    mlm_names = ("lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias")

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    max_position_embeddings: PositionCount
    type_vocab_size: Width
