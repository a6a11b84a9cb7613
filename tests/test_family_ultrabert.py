"""UltraBERT: EuroBERT's layers with sliding windows on two layers in three, and a two-layer prediction head.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

from ffncalc import account, flops, load_config

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_ultrabert_defaults_by_hand(write_config):
    # UltrabertConfig(), UltrabertForMaskedLM: vocabulary 32,000, H 4,096, 32 layers of q/k/v/o H² each (32 heads of
    # 128, no biases), a gated MLP 3 · H · 11,008, two RMSNorms; the final RMSNorm; the head's linear1 and linear2
    # (H ↔ 768, no biases) and its decoder, untied, no bias.
    hidden, ffn, vocab = 4096, 11008, 32000
    layer = 4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden
    total = vocab * hidden + 32 * layer + hidden + 2 * hidden * 768 + vocab * hidden
    assert total == 6_744_707_072
    assert account(str(write_config({"model_type": "ultrabert"}))).total_params == total


def test_ultrabert_prediction_head_is_two_linears_and_the_decoder():
    # synthetic__ultrabert: H 64, prediction_head_size 48, vocabulary 1,000, untied: 64 · 48 + 48 · 64 + 1,000 · 64
    report = account(str(CONFIGS / "synthetic__ultrabert.json"))
    assert report.components.lm_head == 64 * 48 + 48 * 64 + 1000 * 64 == 70_144


def test_every_third_layer_attends_to_the_whole_sequence_the_others_to_a_window():
    # 3 layers, layers 0 and 1 sliding with sliding_window 8: 2 · 8 + 1 = 17 keys; layer 2 full. Each key costs
    # 2 · 4 heads · (24 + 24) = 384 FLOPs per layer: at context 100, (17 + 17 + 100) · 384.
    report = flops(str(CONFIGS / "synthetic__ultrabert.json"), 100)
    assert report.per_token.attention_scores == (17 + 17 + 100) * 384 == 51_456


def test_attention_windows_of_older_configs_set_the_window_and_the_full_layers():
    # attention_windows [0, 6, 6]: layer 0 full, layers 1 and 2 sliding, 6 either side (13 keys); 4 heads of 16
    model = load_config(str(CONFIGS / "synthetic__ultrabert_attention_windows.json"))
    assert [layer.attention.window for layer in model.spec.layers] == [None, 13, 13]


def test_a_tied_ultrabert_head_is_its_two_linears():
    # tie_word_embeddings: the decoder is the token table; linear1 and linear2 (64 ↔ 32) remain
    report = account(str(CONFIGS / "synthetic__ultrabert_tied.json"))
    assert report.components.lm_head == 2 * 64 * 32


def test_ultrabert_sequence_classifier_is_one_linear_layer():
    report = account(str(CONFIGS / "synthetic__ultrabert_attention_windows.json"))
    assert report.outside_layers["other.classifier"] == 64 * 3 + 3
