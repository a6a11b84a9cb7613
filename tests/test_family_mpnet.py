"""MPNet: BERT's post-LN encoder without token types, one relative-position bias for every layer, RoBERTa's heads.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_mpnet_defaults_by_hand(write_config):
    # MPNetConfig(), MPNetForMaskedLM: vocabulary 30,527, H 768, 512 positions, no token types, embeddings LayerNorm
    # 2H; 12 post-LN layers (q, k, v, o H² + H each, FFN 3,072 with biases, two LayerNorms); the relative bias
    # 32 buckets × 12 heads; lm_head dense H² + H, layer_norm 2H, bias V, the decoder tied.
    hidden, ffn = 768, 3072
    layer = 4 * (hidden * hidden + hidden) + hidden * ffn + ffn + ffn * hidden + hidden + 2 * 2 * hidden
    total = (30527 + 512) * hidden + 2 * hidden + 12 * layer + 32 * 12 + hidden * hidden + hidden + 2 * hidden + 30527
    assert total == 109_516_991
    assert account(str(write_config({"model_type": "mpnet"}))).total_params == total


def test_mpnet_relative_bias_is_one_table_for_every_layer():
    # 16 buckets × 4 heads, held by the encoder once, not by each of the 2 layers
    report = account(str(CONFIGS / "synthetic__mpnet_untied.json"))
    assert report.outside_layers["other.mpnet.encoder.relative_attention_bias"] == 16 * 4


def test_mpnet_has_no_token_type_table():
    report = account(str(CONFIGS / "synthetic__mpnet_model.json"))
    assert not any("token_type" in name for name in report.outside_layers)
    assert report.outside_layers["other.pooler.dense"] == 64 * 64 + 64


def test_mpnet_multiple_choice_scores_the_pooled_output_once():
    report = account(str(CONFIGS / "synthetic__mpnet_multiple_choice.json"))
    assert report.outside_layers["other.mpnet.pooler.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier"] == 64 + 1
