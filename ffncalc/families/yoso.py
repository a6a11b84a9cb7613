"""YOSO (uw-madison/yoso-4096): BERT's embeddings, post-LN layers and masked-LM head, with attention weighted by the
collision probability of random hashes of the queries and keys, computed in expectation."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, Width
from ..spec import ModelSpec
from ..values import replace
from .bert import BertLayout
from .nystromformer import NYSTROMFORMER_HEADS
from .registry import family

# YOSO's classes and heads are Nyströmformer's, whose modules transformers copied (no pooler; the sequence and
# multiple-choice classifiers' heads of their own are not laid out).
YOSO_HEADS = NYSTROMFORMER_HEADS


@family("yoso", transformers="YosoConfig", architecture="YOSO", model_class="YosoForMaskedLM")
class YosoConfig(BertLayout):
    """configuration_yoso.py / modeling_yoso.py (YosoModel): BERT's embeddings under yoso.* (word, token-type and
    max_position_embeddings + 2 position rows, a LayerNorm), post-LN layers (q, k, v and output dense with biases,
    intermediate and output dense with biases, two LayerNorms), no pooler; the masked LM adds BERT's cls.predictions.

    With use_expectation (the default) each head weights value j for query i by (1 − arccos(q̂ᵢ · k̂ⱼ) / π) ^
    hash_code_len (q̂, k̂ the normalised query and key): the collision probability of hash_code_len random hyperplane
    hashes, in expectation. That is a q · k product and a weighted sum of the values per key, as softmax attention's
    (YosoCumulation: two matmuls); the arccos and the power are elementwise, not counted. Without it YOSO samples
    num_hash hashes through CUDA kernels of its own (YosoLSHCumulation), which ffncalc does not count; nor a
    conv_window (a depthwise convolution over the values)."""

    class_prefix = "Yoso"
    base_model_prefix = "yoso"
    classes = frozenset(YOSO_HEADS)
    bert_heads = YOSO_HEADS

    use_expectation: Flag
    conv_window: Width | None

    @model_validator(mode="after")
    def _check_attention(self) -> YosoConfig:
        if not self.use_expectation:
            raise ValueError(
                "use_expectation: YOSO then samples num_hash hashes of hash_code_len bits through CUDA kernels of its "
                "own (lsh_cumulation), whose cost ffncalc does not count"
            )
        if self.conv_window is not None:
            raise ValueError(
                "conv_window: YOSO's depthwise convolution over the values (conv_window × 1 per head) is not laid out "
                "by ffncalc yet"
            )
        return self

    def to_spec(self) -> ModelSpec:
        # YosoEmbeddings: max_position_embeddings + 2 rows (the positions start at 2, as RoBERTa's after padding)
        return replace(super().to_spec(), position_embeddings=self.max_position_embeddings + 2)
