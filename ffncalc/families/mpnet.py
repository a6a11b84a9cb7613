"""Microsoft's MPNet (all-mpnet-base-v2 and the sentence-transformers models built on it): BERT's post-LN encoder
without token types, with a relative-position bias shared by every layer, and RoBERTa's heads."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, LearnedTensor, Linear, ModelSpec, Norm, Table, names
from .bert import BERT_MLP, ROBERTA_HEADS, EncoderClasses
from .blocks import heads_divide
from .registry import family

MPNET_ATTENTION = names(q="attention.attn.q", k="attention.attn.k", v="attention.attn.v", o="attention.attn.o")
MPNET_HEADS = {name: heads for name, heads in ROBERTA_HEADS.items() if name != "ForCausalLM"}


@family("mpnet", transformers="MPNetConfig", architecture="MPNet", model_class="MPNetForMaskedLM")
class MPNetConfig(EncoderClasses):
    """configuration_mpnet.py / modeling_mpnet.py.

    Embeddings: word and position tables (padding row 1, whatever pad_token_id says) and a LayerNorm; no token
    types. Layers (post-LN): q, k, v, o with biases (attention.attn.*), attention.LayerNorm; intermediate and output
    dense with biases, output.LayerNorm. The encoder holds one relative_attention_bias table (buckets × heads) that
    every layer adds to its scores. Heads as RoBERTa's: a pooler on the bare model and for multiple choice; the
    masked-LM lm_head (dense, layer_norm, a decoder tied to the word table, lm_head.bias); a dense layer and out_proj
    for sequences; a classifier for tokens; qa_outputs for answers.
    """

    class_prefix = "MPNet"
    base_model_prefix = "mpnet"
    classes = frozenset(MPNET_HEADS)

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    relative_attention_num_buckets: Width
    tie_word_embeddings: Flag

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @model_validator(mode="after")
    def _check_shapes(self) -> MPNetConfig:
        if min(self.vocab_size, self.max_position_embeddings) < 2:
            raise ValueError("vocab_size and max_position_embeddings: MPNet's padding row is 1, so each needs 2 rows")
        return self

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        pooler, mlm, classifier = MPNET_HEADS[self.head_class()]
        extras = []
        if pooler:
            extras.append(self.linear(f"{self.root}pooler.dense", hidden, hidden))
        if mlm:
            extras.append(Extra("lm_head", "lm_head.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "lm_head.layer_norm", self.layer_norm()))
            if not self.tie_word_embeddings:
                extras.append(Extra("lm_head", "lm_head.decoder.bias", LearnedTensor((self.vocab_size,))))
        if classifier == "classifier.dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier is not None:
            outputs = 1 if self.head_class() == "ForMultipleChoice" else self.labels()
            extras.append(self.linear(classifier, hidden, outputs))
        return extras

    def to_spec(self) -> ModelSpec:
        root, hidden, heads = self.root, self.hidden_size, self.num_attention_heads
        attention = Attention(
            hidden, heads, heads, hidden // heads, hidden // heads, MPNET_ATTENTION, True, True, True, True
        )
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms = (("attention.LayerNorm", self.layer_norm()), ("output.LayerNorm", self.layer_norm()))
        layer = Layer(f"{root}encoder.layer.{{i}}", attention, ffn, norms, stack="encoder")
        mlm = MPNET_HEADS[self.head_class()][1]
        extras = [
            Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm()),
            # read by every layer's attention scores (one bias per bucket and head), looked up, not multiplied
            Extra("other", f"{root}encoder.relative_attention_bias", Table(self.relative_attention_num_buckets, heads)),
        ]
        return self.encoder_spec(
            layer,
            self.num_hidden_layers,
            hidden,
            extras + self.head_extras(),
            tie=self.tie_word_embeddings,
            lm_head="lm_head.decoder",
            mlm=mlm,
            head_bias=mlm,
            lm_head_bias="lm_head.bias",
            position_embeddings=self.max_position_embeddings,
        )
