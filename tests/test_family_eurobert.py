"""EuroBERT: Llama's layers attending in both directions, with a masked-LM head whose bias is mlp_bias.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_eurobert_defaults_by_hand(write_config):
    # EuroBertConfig(), EuroBertForMaskedLM: vocabulary 128,256, H 768, 12 layers of q/k/v/o H² each (12 heads of 64,
    # no biases), a gated MLP 3 · H · 3,072, two RMSNorms; the final RMSNorm; lm_head untied, no bias.
    hidden, ffn, vocab = 768, 3072, 128256
    layer = 4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden
    total = vocab * hidden + 12 * layer + hidden + vocab * hidden
    assert total == 310_266_624
    assert account(str(write_config({"model_type": "eurobert"}))).total_params == total


def test_eurobert_attention_has_fewer_key_value_heads_of_their_own_width():
    # 4 heads, 2 KV heads, head_dim 24 with biases: q 64 → 96, k and v 64 → 48, o 96 → 64
    (layer,) = account(str(CONFIGS / "synthetic__eurobert.json")).layers
    assert layer.parts["attention.q"] == 64 * 96 + 96
    assert layer.parts["attention.k"] == layer.parts["attention.v"] == 64 * 48 + 48
    assert layer.parts["attention.o"] == 96 * 64 + 64


def test_a_tied_eurobert_head_keeps_its_bias():
    # tie_word_embeddings and mlp_bias: the decoder is the token table, its bias (1,000) is the head's own
    report = account(str(CONFIGS / "synthetic__eurobert_tied.json"))
    assert report.components.lm_head == 1000


def test_eurobert_sequence_classifier_is_a_dense_layer_and_the_classifier():
    report = account(str(CONFIGS / "synthetic__eurobert_sequence_classification.json"))
    assert report.outside_layers["other.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier"] == 64 * 3 + 3
