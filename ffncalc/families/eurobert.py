"""EuroBERT (EuroBERT/EuroBERT-210m, -610m, -2.1B): Llama's layers as a bidirectional encoder, with masked-LM and
classifier heads."""

from __future__ import annotations

from pydantic import Field

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, ungroupable
from ..spec import Attention, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Norm
from .bert import _EncoderClasses
from .blocks import LLAMA_ATTENTION, LLAMA_MLP, heads_divide
from .registry import family

# EuroBERT's classes: (masked-LM head, a dense layer before the classifier, classifier outputs).
EUROBERT_HEADS: dict[str, tuple[bool, bool, str | None]] = {
    "Model": (False, False, None),
    "ForMaskedLM": (True, False, None),
    "ForSequenceClassification": (False, True, "labels"),
    "ForTokenClassification": (False, False, "labels"),
}


@family("eurobert")
class EuroBertConfig(_EncoderClasses):
    """configuration_eurobert.py / modeling_eurobert.py.

    A token table, no positions (rotary); Llama's pre-norm layers (input_layernorm and post_attention_layernorm
    RMSNorms, q/k/v/o biased by attention_bias with num_key_value_heads key and value heads of head_dim, a gated MLP
    biased by mlp_bias) attending in both directions, and a final RMSNorm, under model.*. Heads: lm_head (hidden →
    vocabulary, its bias mlp_bias), untied by default; for sequences a dense layer and the classifier; for tokens the
    classifier.
    """

    architecture = "EuroBERT"
    config_class = "EuroBertConfig"
    default_model_class = "EuroBertForMaskedLM"  # what the EuroBERT checkpoints name
    class_prefix = "EuroBert"
    base_model_prefix = "model"
    classes = frozenset(EUROBERT_HEADS)
    labelled_classes = frozenset({"ForSequenceClassification", "ForTokenClassification"})
    informational_fields = frozenset({"pad_token_id", "max_position_embeddings"})

    vocab_size: Width = 128256
    hidden_size: Width = 768
    intermediate_size: Width = 3072
    num_hidden_layers: LayerCount = 12
    num_attention_heads: HeadCount = 12
    num_key_value_heads: HeadCount | None = None
    head_dim: Width | None = None
    hidden_act: Name = "silu"
    max_position_embeddings: PositionCount = 8192
    attention_bias: Flag = False
    mlp_bias: Flag = False
    tie_word_embeddings: Flag = False
    pad_token_id: int | None = Field(128001, strict=True)

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

    def to_spec(self) -> ModelSpec:
        root, hidden, bias = self.root, self.hidden_size, self.attention_bias
        head_dim = self.resolved_head_dim
        attention = Attention(
            hidden, self.num_attention_heads, self.kv_heads, head_dim, head_dim, LLAMA_ATTENTION, bias, bias, bias, bias
        )
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_act, LLAMA_MLP, bias=self.mlp_bias)
        norm = Norm("rmsnorm", hidden)
        norms = (("input_layernorm", norm), ("post_attention_layernorm", norm))
        layer = Layer(f"{root}layers.{{i}}", attention, ffn, norms, stack="encoder")
        mlm, dense, classifier = EUROBERT_HEADS[self.head_class()]
        extras: list[Extra] = []
        if dense:
            extras.append(self.linear("dense", hidden, hidden))
        if classifier is not None:
            extras.append(self.linear("classifier", hidden, self.labels()))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.num_hidden_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(f"{root}embed_tokens", f"{root}norm", base_model_prefix=self.base_model_prefix),
            lm_head=mlm,
            lm_head_bias=mlm and self.mlp_bias,
            extras=tuple(extras),
        )
