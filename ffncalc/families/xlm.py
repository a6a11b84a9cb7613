"""XLM (Facebook's cross-lingual language models) and FlauBERT (XLM's model for French, optionally pre-LN): an
encoder that keeps each kind of sublayer in a list of its own (attentions.{i}, layer_norm1.{i}, ffns.{i},
layer_norm2.{i}), with word, position and optional language tables."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, ModelSpec, Norm, Stack, Table, names
from ..values import replace
from .bert import EncoderClasses
from .registry import family

XLM_ATTENTION = names(
    q="attentions.{i}.q_lin", k="attentions.{i}.k_lin", v="attentions.{i}.v_lin", o="attentions.{i}.out_lin"
)
XLM_MLP = names(up="ffns.{i}.lin1", down="ffns.{i}.lin2")

# What each class adds to the encoder: (masked-LM head, classifier module, its outputs: "labels" or "summary").
XLM_HEADS: dict[str, tuple[bool, str, str]] = {
    "Model": (False, "", ""),
    "WithLMHeadModel": (True, "", ""),
    "ForSequenceClassification": (False, "sequence_summary.summary", "summary"),
    "ForTokenClassification": (False, "classifier", "labels"),
    "ForQuestionAnsweringSimple": (False, "qa_outputs", "labels"),
}


@family("xlm", transformers="XLMConfig", architecture="XLM", model_class="XLMWithLMHeadModel")
class XLMConfig(EncoderClasses):
    """configuration_xlm.py / modeling_xlm.py (transformers 5.24).

    A word table (embeddings), a position table of max_position_embeddings rows (learned, or initialised with
    sinusoids by sinusoidal_embeddings: a parameter either way), a language table of n_langs rows when n_langs > 1
    and use_lang_emb, and a LayerNorm on their sum (layer_norm_emb). n_layers post-LN layers, every linear biased:
    attentions.{i} (q_lin, k_lin, v_lin, out_lin), layer_norm1.{i}, ffns.{i} (lin1 to 4 · emb_dim, lin2; gelu,
    or relu without gelu_activation), layer_norm2.{i}. With causal the attention is causal and the model generates
    with a cache (its layers count as a decoder's). Heads: pred_layer.proj (biased, tied to the word table) for the
    LM; sequence_summary.summary (num_labels wide with summary_proj_to_labels, else emb_dim; none without
    summary_use_proj); a classifier for tokens; qa_outputs for answers. asm (an adaptive softmax over cutoffs the
    configuration class does not hold) and is_encoder false (which XLMModel refuses) are refused.
    """

    class_prefix = "XLM"
    base_model_prefix = "transformer"
    classes = frozenset(XLM_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnsweringSimple"})

    vocab_size: Width
    emb_dim: Width
    n_layers: LayerCount
    n_heads: HeadCount
    max_position_embeddings: PositionCount
    gelu_activation: Flag
    causal: Flag
    asm: Flag
    n_langs: Annotated[int, Field(strict=True, ge=0, le=1 << 20)]
    use_lang_emb: Flag
    is_encoder: Flag
    summary_use_proj: Flag
    summary_proj_to_labels: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> XLMConfig:
        if self.emb_dim % self.n_heads:
            raise ValueError(f"emb_dim ({self.emb_dim}) is not a multiple of n_heads ({self.n_heads})")
        if not self.is_encoder:
            raise ValueError(f"is_encoder false: transformers builds {self.architecture} as an encoder only")
        if self.asm and self.head_class() == "WithLMHeadModel":
            raise ValueError(
                "asm true: the adaptive softmax head (AdaptiveLogSoftmaxWithLoss over asm_cutoffs) is not counted yet"
            )
        return self

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.emb_dim, bias=True)

    def summary_width(self) -> int:
        """sequence_summary.summary's outputs: num_labels with summary_proj_to_labels (and labels), else emb_dim."""
        return self.labels() if self.summary_proj_to_labels and self.labels() > 0 else self.emb_dim

    def to_spec(self) -> ModelSpec:
        dim, heads, root = self.emb_dim, self.n_heads, self.root
        attention = Attention(dim, heads, heads, dim // heads, dim // heads, XLM_ATTENTION, True, True, True, True)
        ffn = DenseFfn(dim, 4 * dim, False, "gelu" if self.gelu_activation else "relu", XLM_MLP, bias=True)
        norms = (("layer_norm1.{i}", self.layer_norm()), ("layer_norm2.{i}", self.layer_norm()))
        stack: Stack = "decoder" if self.causal else "encoder"
        layer = Layer(root.rstrip("."), attention, ffn, norms, stack=stack)
        mlm, module, outputs = XLM_HEADS[self.head_class()]
        extras = [Extra("norm", f"{root}layer_norm_emb", self.layer_norm())]
        if self.n_langs > 1 and self.use_lang_emb:
            extras.insert(0, Extra("embedding", f"{root}lang_embeddings", Table(self.n_langs, dim)))
        if outputs == "labels":
            extras.append(self.linear(module, dim, self.labels()))
        elif outputs == "summary" and self.summary_use_proj:
            extras.append(self.linear(module, dim, self.summary_width()))
        spec = self.encoder_spec(
            layer,
            self.n_layers,
            dim,
            extras,
            tie=self.tie_word_embeddings,
            lm_head="pred_layer.proj",
            mlm=mlm,
            head_bias=True,
            position_embeddings=self.max_position_embeddings,
        )
        tables = replace(spec.names, embed_tokens=f"{root}embeddings", position_embeddings=f"{root}position_embeddings")
        return replace(spec, names=tables)


@family("flaubert", transformers="FlaubertConfig", architecture="FlauBERT", model_class="FlaubertWithLMHeadModel")
class FlaubertConfig(XLMConfig):
    """configuration_flaubert.py / modeling_flaubert.py: XLM's model and defaults under Flaubert's class names;
    pre_norm moves each LayerNorm before its sublayer and layerdrop skips layers in training, which change no
    parameter."""

    class_prefix = "Flaubert"
