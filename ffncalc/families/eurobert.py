"""EuroBERT (EuroBERT/EuroBERT-210m, -610m, -2.1B) and its relatives: Llama's layers as a bidirectional encoder, with
masked-LM and classifier heads. UltraBERT (dmis-lab) adds sliding windows on two layers in three and a two-layer
prediction head; ESMC (biohub's protein model) LayerNorms, a LayerNorm on queries and keys across heads, and ESM's
masked-LM head."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, WidthOrZero, derives, ungroupable
from ..spec import Attention, DenseFfn, Extra, Layer, Linear, ModelNames, ModelSpec, Norm, Norms
from ..values import replace
from .bert import EncoderClasses
from .blocks import LLAMA_ATTENTION, LLAMA_MLP, heads_divide, periodic_layer_types, windows_of_layer_types
from .registry import family

# EuroBERT's classes: (masked-LM head, a dense layer before the classifier, classifier outputs).
EUROBERT_HEADS: dict[str, tuple[bool, bool, str | None]] = {
    "Model": (False, False, None),
    "ForMaskedLM": (True, False, None),
    "ForSequenceClassification": (False, True, "labels"),
    "ForTokenClassification": (False, False, "labels"),
}


@family("eurobert", transformers="EuroBertConfig", architecture="EuroBERT", model_class="EuroBertForMaskedLM")
class EuroBertConfig(EncoderClasses):
    """configuration_eurobert.py / modeling_eurobert.py.

    A token table, no positions (rotary); Llama's pre-norm layers (input_layernorm and post_attention_layernorm
    RMSNorms, q/k/v/o biased by attention_bias with num_key_value_heads key and value heads of head_dim, a gated MLP
    biased by mlp_bias) attending in both directions, and a final RMSNorm, under model.*. Heads: lm_head (hidden →
    vocabulary, its bias mlp_bias), untied by default; for sequences a dense layer and the classifier; for tokens the
    classifier.
    """

    class_prefix = "EuroBert"
    base_model_prefix = "model"
    classes = frozenset(EUROBERT_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification"})
    informational_fields = frozenset({"pad_token_id", "max_position_embeddings"})

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount
    attention_bias: Flag
    mlp_bias: Flag
    tie_word_embeddings: Flag

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    @derives("num_key_value_heads", "num_attention_heads")
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    @derives("head_dim", "hidden_size // num_attention_heads")
    def resolved_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def warnings(self) -> list[str]:
        return super().warnings() + ungroupable(
            self.num_attention_heads, self.kv_heads, "num_attention_heads", "num_key_value_heads"
        )

    def norm(self) -> Norm:
        """The layers' and the final norm: an RMSNorm."""
        return Norm("rmsnorm", self.hidden_size)

    def attention(self, window: int | None = None) -> Attention:
        """Llama's q, k, v, o (num_key_value_heads key and value heads of head_dim), biased by attention_bias."""
        hidden, heads, kv_heads = self.hidden_size, self.num_attention_heads, self.kv_heads
        size, bias = self.resolved_head_dim, self.attention_bias
        return Attention(hidden, heads, kv_heads, size, size, LLAMA_ATTENTION, bias, bias, bias, bias, window=window)

    def windows(self) -> list[int | None]:
        """Each layer's attention window (None: the whole sequence)."""
        return [None] * self.num_hidden_layers

    def layers(self) -> tuple[Layer, ...]:
        """Pre-norm: input_layernorm, attention; post_attention_layernorm, the gated MLP."""
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, LLAMA_MLP, bias=self.mlp_bias)
        norms: Norms = (("input_layernorm", self.norm()), ("post_attention_layernorm", self.norm()))
        name = f"{self.root}layers.{{i}}"
        return tuple(Layer(name, self.attention(w), ffn, norms, stack="encoder") for w in self.windows())

    def has_mlm(self) -> bool:
        return EUROBERT_HEADS[self.head_class()][0]

    def head_extras(self) -> list[Extra]:
        """The classifiers (the masked-LM decoder is the spec's head)."""
        hidden = self.hidden_size
        _, dense, classifier = EUROBERT_HEADS[self.head_class()]
        extras: list[Extra] = []
        if dense:
            extras.append(self.linear("dense", hidden, hidden))
        if classifier is not None:
            extras.append(self.linear("classifier", hidden, self.labels()))
        return extras

    def spec_names(self) -> ModelNames:
        """Where the checkpoint keeps the embeddings, the final norm and the head."""
        root = self.root
        return ModelNames(f"{root}embed_tokens", f"{root}norm", base_model_prefix=self.base_model_prefix)

    def head_bias(self) -> bool:
        """Whether the masked-LM head's output has a bias (EuroBERT's: with mlp_bias)."""
        return self.has_mlm() and self.mlp_bias

    def to_spec(self) -> ModelSpec:
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=self.layers(),
            final_norm=self.norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=self.spec_names(),
            lm_head=self.has_mlm(),
            lm_head_bias=self.head_bias(),
            extras=tuple(self.head_extras()),
        )


# UltraBERT's classes: (masked-LM head, classifier module, its outputs: num_labels, or a fixed width).
ULTRABERT_HEADS: dict[str, tuple[bool, str | None, int | None]] = {
    "Model": (False, None, None),
    "ForMaskedLM": (True, None, None),
    "ForSequenceClassification": (False, "classifier", None),
    "ForTokenClassification": (False, "classifier", None),
    "ForQuestionAnswering": (False, "qa_outputs", 2),
}


@family(
    "ultrabert",
    transformers="UltrabertConfig",
    architecture="UltraBERT",
    model_class="UltrabertForMaskedLM",
    read_beyond={
        "num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label",
        "attention_windows": "no field of UltraBertConfig: __post_init__ reads it from the config's keys",
    },
)
class UltraBertConfig(EuroBertConfig):
    """configuration_ultrabert.py / modeling_ultrabert.py (dmis-lab/UltraBERT-*): EuroBERT's model, whose layers in
    layer_types "sliding_attention" (by default two in three: all but every third, from the third) attend only to keys
    within sliding_window positions either side, 2 · sliding_window + 1 keys (fewer at the sequence's ends, which
    ffncalc does not subtract). The masked-LM head: linear1 (hidden → prediction_head_size), linear2 (back to hidden),
    both unbiased, then a decoder with no bias, untied by default. Classifiers: one linear layer (num_labels, or 2 for
    answers). Named as the checkpoints store them: transformers 5.24 renames ultrabert.* to model.* and cls to
    head.decoder on load (conversion_mapping.py, "UltrabertForMaskedLM"), and back when it saves.

    Older configs keep attention_windows (a window per layer, 0 for a full layer) instead: __post_init__ reads the
    first nonzero one as sliding_window and the layers' kinds from them, as ffncalc does.
    """

    class_prefix = "Ultrabert"
    base_model_prefix = "ultrabert"
    classes = frozenset(ULTRABERT_HEADS)

    sliding_window: Width
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    attention_windows: list[WidthOrZero] | None = Field(None, max_length=1 << 16)
    prediction_head_size: Width

    @model_validator(mode="after")
    def _check_layer_types(self) -> UltraBertConfig:
        for field in ("layer_types", "attention_windows"):
            value = getattr(self, field)
            if value is not None and len(value) != self.num_hidden_layers:
                raise ValueError(f"{field} has {len(value)} entries for {self.num_hidden_layers} layers")
        return self

    @derives(
        "layer_types", "every third layer full, the others sliding (attention_windows' zeros full, where it is given)"
    )
    def kinds(self) -> list[str]:
        """Each layer's kind: layer_types, else attention_windows' (0: full), else every third layer full."""
        if self.layer_types is not None:
            return list(self.layer_types)
        if self.attention_windows is not None:
            return ["sliding_attention" if window else "full_attention" for window in self.attention_windows]
        return periodic_layer_types(self.num_hidden_layers, 3)

    def radius(self) -> int:
        """How far either side a sliding layer reads: the first nonzero of attention_windows, else sliding_window."""
        return next((window for window in self.attention_windows or () if window), self.sliding_window)

    def unused_fields(self) -> set[str]:
        unused = set() if "sliding_attention" in self.kinds() else {"sliding_window"}
        unused |= {"attention_windows"} if self.attention_windows is None else set()
        return unused | (set() if self.has_mlm() else {"prediction_head_size"})

    def windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), 2 * self.radius() + 1)

    def has_mlm(self) -> bool:
        return ULTRABERT_HEADS[self.head_class()][0]

    def head_extras(self) -> list[Extra]:
        hidden, width = self.hidden_size, self.prediction_head_size
        mlm, classifier, outputs = ULTRABERT_HEADS[self.head_class()]
        extras: list[Extra] = []
        if mlm:
            extras.append(Extra("lm_head", "head.linear1", Linear(hidden, width)))
            extras.append(Extra("lm_head", "head.linear2", Linear(width, hidden)))
        if classifier is not None:
            extras.append(self.linear(classifier, hidden, outputs or self.labels()))
        return extras

    def spec_names(self) -> ModelNames:
        root = self.root
        return ModelNames(f"{root}embed_tokens", f"{root}norm", lm_head="cls", base_model_prefix="ultrabert")

    def head_bias(self) -> bool:
        return False  # the head's linear2 carries its bias (an extra); the decoder has none


# ESMC's classes: (masked-LM head, classifier: a dense layer and out_proj, or score).
ESMC_HEADS: dict[str, tuple[bool, str | None]] = {
    "Model": (False, None),
    "ForMaskedLM": (True, None),
    "ForSequenceClassification": (False, "classifier.dense"),
    "ForTokenClassification": (False, "score"),
}


@family("esmc", transformers="EsmcConfig", architecture="ESMC", model_class="EsmcForMaskedLM")
class EsmcConfig(EuroBertConfig):
    """configuration_esmc.py / modeling_esmc.py (biohub/ESMC-300M, -600M, -6B): Llama's fields and layers under esmc.*,
    with LayerNorms (biased) for input_layernorm and post_attention_layernorm, queries and keys normalised across all
    heads after their projections (q_norm, k_norm: LayerNorms of hidden_size without a bias), and a final norm without a
    bias; never grouped-query (num_key_value_heads must equal num_attention_heads). The residual scaling (each branch
    divided by √(layers / 36)) is no matmul. The masked-LM head is ESM's: dense (hidden → hidden), gelu, layer_norm,
    decoder (→ vocabulary), all biased; EsmcForMaskedLM ties nothing (no _tied_weights_keys), whatever
    tie_word_embeddings says. Classifiers: a dense layer and out_proj (sequences), score (tokens), biased.
    """

    class_prefix = "Esmc"
    base_model_prefix = "esmc"
    classes = frozenset(ESMC_HEADS)

    @model_validator(mode="after")
    def _check_esmc_heads(self) -> EsmcConfig:
        if self.kv_heads != self.num_attention_heads:
            raise ValueError(
                f"num_key_value_heads ({self.kv_heads}) must equal num_attention_heads ({self.num_attention_heads}): "
                "ESMC does not support grouped-query attention"
            )
        if self.num_attention_heads * self.resolved_head_dim != self.hidden_size:
            raise ValueError(
                f"head_dim ({self.resolved_head_dim}) × num_attention_heads ({self.num_attention_heads}) must be "
                f"hidden_size ({self.hidden_size}): q_norm and k_norm are hidden_size wide"
            )
        return self

    def unused_fields(self) -> set[str]:
        return {"tie_word_embeddings"}

    def norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def attention(self, window: int | None = None) -> Attention:
        across_heads = Norm("layernorm", self.hidden_size)  # EsmcLayerNorm(hidden_size, bias=False)
        attention = super().attention(window)
        return replace(attention, q_norm=across_heads, k_norm=across_heads)

    def has_mlm(self) -> bool:
        return ESMC_HEADS[self.head_class()][0]

    def head_extras(self) -> list[Extra]:
        hidden = self.hidden_size
        mlm, classifier = ESMC_HEADS[self.head_class()]
        extras: list[Extra] = []
        if mlm:
            extras.append(Extra("lm_head", "lm_head.dense", Linear(hidden, hidden, bias=True)))
            extras.append(Extra("norm", "lm_head.layer_norm", Norm("layernorm", hidden, bias=True)))
        if classifier == "classifier.dense":
            extras.append(self.linear("classifier.dense", hidden, hidden))
            extras.append(self.linear("classifier.out_proj", hidden, self.labels()))
        elif classifier is not None:
            extras.append(self.linear(classifier, hidden, self.labels()))
        return extras

    def to_spec(self) -> ModelSpec:
        root, mlm = self.root, self.has_mlm()
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=self.layers(),
            final_norm=Norm("layernorm", self.hidden_size),
            tie_word_embeddings=False,
            names=ModelNames(f"{root}embed_tokens", f"{root}norm", lm_head="lm_head.decoder", base_model_prefix="esmc"),
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(self.head_extras()),
        )
