"""Meta's ESM-1b and ESM-2 protein language models: BERT's modules, pre-LN, with rotary or learned positions and a
contact-prediction head over every layer's attention maps."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    Linear,
    ModelSpec,
    Norm,
    Norms,
    StoredTensor,
)
from ..values import replace
from .bert import BERT_ATTENTION, BERT_CROSS_ATTENTION, BERT_MLP, EncoderClasses
from .blocks import heads_divide
from .registry import family

# ESM's classes: (masked-LM head, classifier: RoBERTa's dense and out_proj, or one layer). None has a pooler.
ESM_HEADS: dict[str, tuple[bool, str | None]] = {
    "Model": (False, None),
    "ForMaskedLM": (True, None),
    "ForSequenceClassification": (False, "classifier.dense"),
    "ForTokenClassification": (False, "classifier"),
}


@family("esm", transformers="EsmConfig", architecture="ESM", model_class="EsmForMaskedLM")
class EsmConfig(EncoderClasses):
    """configuration_esm.py / modeling_esm.py (facebook/esm2_*, esm1b).

    Embeddings: the word table (vocab_size has no default), a position table when position_embedding_type is
    "absolute" (none for "rotary"), a LayerNorm (embeddings.layer_norm) when emb_layer_norm_before; no token types.
    Layers, pre-LN: attention.LayerNorm, then BERT's q, k, v and output dense with biases; LayerNorm, then the MLP
    (intermediate, output) with biases, gelu; a decoder with add_cross_attention also attends to an encoder's states
    (crossattention, its own LayerNorm). encoder.emb_layer_norm_after after the last layer. The bare model (built
    with its pooler) and every class hold contact_head.regression (layers × heads → 1, with a bias), which reads the
    attention maps: it runs per pair of tokens when contacts are predicted, never for a token, so its FLOPs are not
    counted. The masked-LM head: lm_head.dense, lm_head.layer_norm, a decoder tied to the word table, lm_head.bias.
    Rotary positions keep rotary_embeddings.inv_freq (head size / 2), a persistent buffer; checkpoints written before
    transformers 5 keep one in every layer (attention.self.rotary_embeddings.inv_freq) instead.
    """

    class_prefix = "Esm"
    base_model_prefix = "esm"
    classes = frozenset(ESM_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification"})

    vocab_size: Width | None  # EsmConfig's default; a config must say
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    max_position_embeddings: PositionCount
    position_embedding_type: Name | None
    emb_layer_norm_before: Flag | None
    is_folding_model: Flag | None
    is_decoder: Flag | None
    add_cross_attention: Flag | None
    tie_word_embeddings: Flag

    @model_validator(mode="before")
    @classmethod
    def _require_vocab_size(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and raw.get("vocab_size") is None:
            raise ValueError("vocab_size: EsmConfig has no default vocabulary size; the config must say it")
        return raw

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @model_validator(mode="after")
    def _check_shapes(self) -> EsmConfig:
        if self.is_folding_model:
            raise ValueError(
                "is_folding_model: ESMFold's folding trunk (EsmForProteinFolding) is not counted by ffncalc"
            )
        if self.add_cross_attention and not self.is_decoder:
            raise ValueError(
                "add_cross_attention: cross-attention needs is_decoder (transformers refuses it otherwise)"
            )
        if self.position_embedding_type not in ("absolute", "rotary"):
            raise ValueError(
                f"position_embedding_type: {self.position_embedding_type!r} is not one ESM builds ('absolute', 'rotary')"
            )
        return self

    @property
    def rotary(self) -> bool:
        return self.position_embedding_type == "rotary"

    def unused_fields(self) -> set[str]:
        return {"max_position_embeddings"} if self.rotary else set()

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def layer(self) -> Layer:
        """Pre-LN: attention.LayerNorm before attention, LayerNorm before the MLP (crossattention.LayerNorm before
        cross-attention)."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_size = hidden // heads
        attention = Attention(hidden, heads, heads, head_size, head_size, BERT_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, "gelu", BERT_MLP, bias=True)
        norms: Norms = (("attention.LayerNorm", self.layer_norm()), ("LayerNorm", self.layer_norm()))
        cross = None
        if self.add_cross_attention:
            cross = Attention(hidden, heads, heads, head_size, head_size, BERT_CROSS_ATTENTION, True, True, True, True)
            norms += (("crossattention.LayerNorm", self.layer_norm()),)
        return Layer(f"{self.root}encoder.layer.{{i}}", attention, ffn, norms, cross_attention=cross, stack="encoder")

    def inv_freq(self) -> tuple[CheckpointExtra, ...]:
        """Rotary's inverse frequencies, head size / 2: a persistent buffer of the model, once (per layer in older
        checkpoints)."""
        if not self.rotary:
            return ()
        half = self.hidden_size // self.num_attention_heads // 2
        root = self.root
        return (
            CheckpointExtra(
                name="rotary_embeddings.inv_freq buffer",
                reason=f"{half} inverse frequencies of the rotary positions: a persistent buffer",
                tensors=(StoredTensor(f"{root}rotary_embeddings.inv_freq", (half,)),),
                buffer=True,
            ),
            CheckpointExtra(
                name="per-layer rotary inv_freq buffers",
                reason=f"{half} inverse frequencies in every layer, where checkpoints saved before transformers 5 kept them",
                tensors=(
                    StoredTensor(f"{root}encoder.layer.{{i}}.attention.self.rotary_embeddings.inv_freq", (half,)),
                ),
                per_layer=tuple(range(self.num_hidden_layers)),
                likely=self.written_before(5, 0),
            ),
        )

    def to_spec(self) -> ModelSpec:
        root, hidden = self.root, self.hidden_size
        mlm, classifier = ESM_HEADS[self.head_class()]
        extras: list[Extra] = []
        if self.emb_layer_norm_before:
            extras.append(Extra("norm", f"{root}embeddings.layer_norm", self.layer_norm()))
        contacts = Linear(self.num_hidden_layers * self.num_attention_heads, 1, bias=True)
        extras.append(Extra("other", f"{root}contact_head.regression", contacts, "not_generating"))
        if self.head_class() == "Model":  # EsmModel builds its pooler; the classes with heads build it without
            extras.append(self.linear(f"{root}pooler.dense", hidden, hidden))
        if mlm:
            extras.append(Extra("lm_head", "lm_head.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "lm_head.layer_norm", self.layer_norm()))
        if classifier == "classifier.dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier is not None:
            extras.append(self.linear(classifier, hidden, self.labels()))
        spec = self.encoder_spec(
            self.layer(),
            self.num_hidden_layers,
            hidden,
            extras,
            tie=self.tie_word_embeddings,
            lm_head="lm_head.decoder",
            mlm=mlm,
            head_bias=mlm,
            lm_head_bias="lm_head.bias",
            positions=not self.rotary,
            position_embeddings=0 if self.rotary else self.max_position_embeddings,
            checkpoint_extras=self.inv_freq(),
        )
        names = replace(spec.names, final_norm=f"{root}encoder.emb_layer_norm_after")
        return replace(spec, final_norm=self.layer_norm(), names=names)
