"""Answer.AI's and LightOn's ModernBERT: a pre-LN encoder with fused projections, a GeGLU MLP, rotary positions,
and local attention on two layers in three."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Attention, DenseFfn, Extra, Layer, LearnedTensor, Linear, ModelNames, ModelSpec, Norm, names
from ..values import replace
from .bert import EncoderClasses
from .blocks import heads_divide, windows_of_layer_types
from .registry import family

MODERNBERT_ATTENTION = names(q="attn.Wqkv", k="attn.Wqkv", v="attn.Wqkv", o="attn.Wo")
MODERNBERT_MLP = names(gate="mlp.Wi", up="mlp.Wi", down="mlp.Wo")  # Wi emits the activated half, then the gate

# ModernBERT's classes: (masked-LM decoder, classifier outputs); every class but the bare model has the head
# (dense, norm) on top of the encoder.
MODERNBERT_HEADS: dict[str, tuple[bool, int | str | None]] = {
    "Model": (False, None),
    "ForMaskedLM": (True, None),
    "ForSequenceClassification": (False, "labels"),
    "ForTokenClassification": (False, "labels"),
    "ForQuestionAnswering": (False, "labels"),
    "ForMultipleChoice": (False, 1),
}


@family(
    "modernbert",
    transformers="ModernBertConfig",
    architecture="ModernBERT",
    model_class="ModernBertModel",
    read_beyond={
        "num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label",
        "global_attn_every_n_layers": "no field of ModernBertConfig: __post_init__ reads it from the config's keys",
    },
)
class ModernBertConfig(EncoderClasses):
    """configuration_modernbert.py / modeling_modernbert.py.

    Embeddings: a token table and a LayerNorm (no positions: rotary). Layers (pre-LN): attn_norm (none in
    layer 0, whose input is the embeddings' norm), Wqkv (3 · hidden) and Wo, biased by attention_bias;
    mlp_norm, Wi (hidden → 2 · intermediate: the activated half and its gate) and Wo, biased by mlp_bias;
    a final_norm. LayerNorms carry a bias only with norm_bias. ``layer_types`` (default: every
    global_attn_every_n_layers-th layer, from the first, full, the others sliding) gives sliding layers a
    window: transformers masks keys farther than local_attention // 2 either side, so a token attends to
    2 · (local_attention // 2) + 1 keys (fewer at the sequence's ends, which ffncalc does not subtract).
    Heads: a dense (bias: classifier_bias) and a norm for every class with one; the masked-LM decoder tied
    to the token table, with a bias (decoder_bias); classifiers num_labels wide (1 for multiple choice).
    """

    class_prefix = "ModernBert"
    base_model_prefix = "model"
    classes = frozenset(MODERNBERT_HEADS)

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    hidden_activation: Name
    max_position_embeddings: PositionCount
    norm_bias: Flag
    attention_bias: Flag
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    global_attn_every_n_layers: Width = 3
    local_attention: Width
    mlp_bias: Flag
    decoder_bias: Flag
    classifier_bias: Flag
    tie_word_embeddings: Flag

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @model_validator(mode="after")
    def _check_shapes(self) -> ModernBertConfig:
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers")
        return self

    @derives(
        "layer_types", "every global_attn_every_n_layers-th layer (default 3), from the first, full; the others sliding"
    )
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        every = self.global_attn_every_n_layers
        return ["sliding_attention" if i % every else "full_attention" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        unused = {"global_attn_every_n_layers"} if self.layer_types is not None else set()
        if not MODERNBERT_HEADS[self.head_class()][0]:
            unused.add("decoder_bias")
        if self.head_class() == "Model":
            unused.add("classifier_bias")
        return unused

    def window(self) -> int:
        """Keys a token of a sliding layer attends to: local_attention // 2 either side, and itself."""
        return 2 * (self.local_attention // 2) + 1

    def norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=self.norm_bias)

    def layers(self, root: str) -> tuple[Layer, ...]:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim, bias = hidden // heads, self.attention_bias
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_activation, MODERNBERT_MLP, self.mlp_bias)
        built = []
        for index, window in enumerate(windows_of_layer_types(self.kinds(), self.window())):
            attention = Attention(
                hidden, heads, heads, head_dim, head_dim, MODERNBERT_ATTENTION, bias, bias, bias, bias, window=window
            )
            norms = (
                (("mlp_norm", self.norm()),) if index == 0 else (("attn_norm", self.norm()), ("mlp_norm", self.norm()))
            )
            built.append(Layer(f"{root}layers.{{i}}", attention, ffn, norms, stack="encoder"))
        return tuple(built)

    def to_spec(self) -> ModelSpec:
        root, hidden = self.root, self.hidden_size
        mlm, classifier = MODERNBERT_HEADS[self.head_class()]
        extras = [Extra("norm", f"{root}embeddings.norm", self.norm())]
        if self.head_class() != "Model":
            extras.append(Extra("other", "head.dense", Linear(hidden, hidden, bias=self.classifier_bias)))
            extras.append(Extra("norm", "head.norm", self.norm()))
        if mlm and self.decoder_bias:  # transformers' component names call the decoder's bias "other"
            extras.append(Extra("other", "decoder.bias", LearnedTensor((self.vocab_size,))))
        if classifier is not None:
            outputs = classifier if isinstance(classifier, int) else self.labels()
            extras.append(self.linear("classifier", hidden, outputs))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=self.layers(root),
            final_norm=self.norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}embeddings.tok_embeddings", f"{root}final_norm", lm_head="decoder", base_model_prefix="model"
            ),
            lm_head=mlm,
            extras=tuple(extras),
        )


MODERNBERT_DECODER_ATTENTION = names(q="attn.q_proj", k="attn.k_proj", v="attn.v_proj", o="attn.Wo")
# ModernBERT decoder's classes: the module of the prediction head each has on top of the model (dense, norm), or None
MODERNBERT_DECODER_HEADS: dict[str, str | None] = {
    "Model": None,
    "ForCausalLM": "lm_head",
    "ForSequenceClassification": "head",
}


@family(
    "modernbert-decoder",
    transformers="ModernBertDecoderConfig",
    architecture="ModernBERT decoder",
    model_class="ModernBertDecoderForCausalLM",
)
class ModernBertDecoderConfig(ModernBertConfig):
    """configuration_modernbert_decoder.py / modular_modernbert_decoder.py: ModernBERT's layers run causally, with
    q_proj, k_proj and v_proj apart (attention_bias) and Wo; sliding layers attend to the last local_attention // 2
    keys (ModernBertDecoderConfig's sliding_window, "half of" ModernBERT's). The causal LM puts ModernBERT's
    prediction head (lm_head: a dense biased by classifier_bias, a norm) before its decoder, tied to the token table
    and biased by decoder_bias; the classifier its head (head) and a classifier num_labels wide."""

    class_prefix = "ModernBertDecoder"
    classes = frozenset(MODERNBERT_DECODER_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification"})

    def unused_fields(self) -> set[str]:
        unused = {"global_attn_every_n_layers"} if self.layer_types is not None else set()
        if self.head_class() != "ForCausalLM":
            unused.add("decoder_bias")
        if self.head_class() == "Model":
            unused.add("classifier_bias")
        return unused

    def window(self) -> int:
        """Keys a token of a sliding layer attends to: the last local_attention // 2, itself among them."""
        return self.local_attention // 2

    def layers(self, root: str) -> tuple[Layer, ...]:
        return tuple(
            replace(
                layer,
                stack="decoder",
                attention=replace(layer.attention, names=MODERNBERT_DECODER_ATTENTION),
            )
            for layer in super().layers(root)
            if layer.attention is not None
        )

    def to_spec(self) -> ModelSpec:
        root, hidden = self.root, self.hidden_size
        head = MODERNBERT_DECODER_HEADS[self.head_class()]
        extras = [Extra("norm", f"{root}embeddings.norm", self.norm())]
        causal = self.head_class() == "ForCausalLM"
        if head is not None:
            # the causal LM's prediction head is part of its LM head (lm_head.dense), the classifier's is not
            dense = Linear(hidden, hidden, bias=self.classifier_bias)
            extras.append(Extra("lm_head" if causal else "other", f"{head}.dense", dense))
            extras.append(Extra("norm", f"{head}.norm", self.norm()))
        if causal and self.decoder_bias:
            extras.append(Extra("other", "decoder.bias", LearnedTensor((self.vocab_size,))))
        if self.head_class() == "ForSequenceClassification":
            classifier = Linear(hidden, self.labels(), bias=self.classifier_bias)
            extras.append(Extra("other", "classifier", classifier, "not_generating"))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=self.layers(root),
            final_norm=self.norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}embeddings.tok_embeddings", f"{root}final_norm", lm_head="decoder", base_model_prefix="model"
            ),
            lm_head=causal,
            extras=tuple(extras),
        )
