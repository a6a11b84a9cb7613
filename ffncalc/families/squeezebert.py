"""SqueezeBERT (squeezebert/squeezebert-uncased): BERT's post-LN encoder with every linear map of its layers a grouped
1 × 1 convolution, a block-diagonal matmul stored as a Conv1d weight [out, in / groups, 1]."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Width
from ..spec import Attention, DenseFfn, Layer, Norms, names
from .bert import BertLayout
from .registry import family

# SqueezeBERT's classes: (pooler, masked-LM head, next-sentence head, classifier outputs). SqueezeBertModel always builds
# its pooler, so every class holds it.
SQUEEZEBERT_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForMaskedLM": (True, True, False, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForMultipleChoice": (True, False, False, 1),
    "ForTokenClassification": (True, False, False, "labels"),
    "ForQuestionAnswering": (True, False, False, "labels"),
}
# Each grouped convolution: its groups field, its input and output widths (the fields that hold them).
GROUPED: tuple[tuple[str, str, str], ...] = (
    ("q_groups", "hidden_size", "hidden_size"),
    ("k_groups", "hidden_size", "hidden_size"),
    ("v_groups", "hidden_size", "hidden_size"),
    ("post_attention_groups", "hidden_size", "hidden_size"),
    ("intermediate_groups", "hidden_size", "intermediate_size"),
    ("output_groups", "intermediate_size", "hidden_size"),
)


@family(
    "squeezebert", transformers="SqueezeBertConfig", architecture="SqueezeBERT", model_class="SqueezeBertForMaskedLM"
)
class SqueezeBertConfig(BertLayout):
    """configuration_squeezebert.py / modeling_squeezebert.py: BERT's embeddings (word, position and token-type tables
    embedding_size wide, which must be hidden_size, and a LayerNorm) under transformer.*, and layers
    (encoder.layers.{i}) whose linear maps are grouped 1 × 1 convolutions with biases: attention.query, key and value
    (hidden → hidden in q_groups, k_groups, v_groups), post_attention.conv1d (the output projection,
    post_attention_groups) and its layernorm, intermediate.conv1d (hidden → intermediate, intermediate_groups) and
    output.conv1d (intermediate → hidden, output_groups) and its layernorm. Every class holds the pooler
    (transformer.pooler.dense); the masked LM adds BERT's cls.predictions (a dense transform and LayerNorm, a decoder
    tied to the word table, its bias); classifiers num_labels wide (one output for multiple choice)."""

    class_prefix = "SqueezeBert"
    base_model_prefix = "transformer"
    classes = frozenset(SQUEEZEBERT_HEADS)
    bert_heads = SQUEEZEBERT_HEADS

    embedding_size: Width
    q_groups: Width
    k_groups: Width
    v_groups: Width
    post_attention_groups: Width
    intermediate_groups: Width
    output_groups: Width

    @model_validator(mode="after")
    def _check_groups(self) -> SqueezeBertConfig:
        if self.embedding_size != self.hidden_size:
            raise ValueError(
                f"embedding_size ({self.embedding_size}) differs from hidden_size ({self.hidden_size}); "
                "transformers' SqueezeBertEncoder asserts they are equal"
            )
        for groups_field, *width_fields in GROUPED:
            groups = getattr(self, groups_field)
            for width_field in width_fields:
                if getattr(self, width_field) % groups:
                    raise ValueError(
                        f"{groups_field} ({groups}) does not divide {width_field} ({getattr(self, width_field)}); "
                        "torch's Conv1d refuses it"
                    )
        return self

    def encoder_layer(self) -> Layer:
        hidden, heads = self.hidden_size, self.num_attention_heads
        attention_names = names(
            pointwise=("q", "k", "v", "o"),
            groups=(
                ("q", self.q_groups),
                ("k", self.k_groups),
                ("v", self.v_groups),
                ("o", self.post_attention_groups),
            ),
            q="attention.query",
            k="attention.key",
            v="attention.value",
            o="post_attention.conv1d",
        )
        mlp = names(
            groups=(("up", self.intermediate_groups), ("down", self.output_groups)),
            pointwise=("up", "down"),
            up="intermediate.conv1d",
            down="output.conv1d",
        )
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, attention_names, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, mlp, bias=True)
        norms: Norms = (("post_attention.layernorm", self.layer_norm()), ("output.layernorm", self.layer_norm()))
        return Layer(f"{self.root}encoder.layers.{{i}}", attention, ffn, norms, stack="encoder")
