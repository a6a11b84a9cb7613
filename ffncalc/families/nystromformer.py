"""Nyströmformer (uw-madison/nystromformer-512): BERT's embeddings, post-LN layers and masked-LM head, with a depthwise
convolution over the values beside attention, which transformers runs as softmax attention over every key when
num_landmarks equals segment_means_seq_len."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Width
from ..spec import Layer, ModelSpec, Parameter
from ..values import replace
from .bert import BertLayout
from .registry import family

# The classes ffncalc counts: (pooler, masked-LM head, next-sentence head, classifier outputs). NystromformerModel has
# no pooler; the sequence and multiple-choice classifiers' heads of their own (a dense layer before the output) are
# not laid out, so a config naming them is counted as the masked LM.
NYSTROMFORMER_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (False, False, False, None),
    "ForMaskedLM": (False, True, False, None),
    "ForTokenClassification": (False, False, False, "labels"),
    "ForQuestionAnswering": (False, False, False, "labels"),
}


@family(
    "nystromformer",
    transformers="NystromformerConfig",
    architecture="Nyströmformer",
    model_class="NystromformerForMaskedLM",
)
class NystromformerConfig(BertLayout):
    """configuration_nystromformer.py / modeling_nystromformer.py (NystromformerSelfAttention): BERT's embeddings under
    nystromformer.* (word, token-type and max_position_embeddings + 2 position rows, a LayerNorm), post-LN layers (q,
    k, v and output dense with biases, the MLP with biases, two LayerNorms), no pooler; the masked LM adds BERT's
    cls.predictions.

    The Nyström approximation runs only when num_landmarks differs from segment_means_seq_len (the sequence length
    the config says, not the input's): its num_landmarks segment means and the iterated pseudo-inverse of their
    landmark matrix cost a fixed amount per sequence beside what each token costs, which ffncalc does not state, so
    such a config is refused. When they are equal (the default, 64 and 64) every query attends to every key by
    softmax, as BERT's. Each head also convolves its values along the sequence (attention.self.conv: [heads, 1,
    conv_kernel_size, 1], no bias, padded to keep the length; a mixer's part, where transformers' count files a
    convolution): 2 · hidden_size · conv_kernel_size FLOPs a token, counted under other (no weight of the spec
    multiplies a token's own vector)."""

    class_prefix = "Nystromformer"
    base_model_prefix = "nystromformer"
    classes = frozenset(NYSTROMFORMER_HEADS)
    bert_heads = NYSTROMFORMER_HEADS

    segment_means_seq_len: Width
    num_landmarks: Width
    conv_kernel_size: Width  # NystromformerConfig declares an int: transformers refuses null, so every layer convolves

    @model_validator(mode="after")
    def _check_attention(self) -> NystromformerConfig:
        if self.num_landmarks != self.segment_means_seq_len:
            raise ValueError(
                f"num_landmarks ({self.num_landmarks}) differs from segment_means_seq_len "
                f"({self.segment_means_seq_len}): transformers then runs the Nyström approximation, whose landmarks "
                "and pseudo-inverse cost a fixed amount per sequence, which ffncalc does not count"
            )
        return self

    def encoder_layer(self) -> Layer:
        layer = super().encoder_layer()
        heads, kernel = self.num_attention_heads, self.conv_kernel_size
        conv = Parameter("mixer", "conv", "attention.self.conv.weight", (heads, 1, kernel, 1))
        return replace(layer, parameters=(conv,), other_flops=2 * self.hidden_size * kernel)

    def to_spec(self) -> ModelSpec:
        # NystromformerEmbeddings: max_position_embeddings + 2 rows (the positions start at 2)
        return replace(super().to_spec(), position_embeddings=self.max_position_embeddings + 2)
