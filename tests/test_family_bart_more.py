"""The rest of BART's lineage: PLBART, M2M-100, Blenderbot and Blenderbot-Small.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (their synthetic
configs and defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def encoder_layer(d: int, ffn: int) -> int:
    """q, k, v, out_proj d² + d each; fc1 d · F + F, fc2 F · d + d; two LayerNorms 2d each."""
    return 4 * (d * d + d) + d * ffn + ffn + ffn * d + d + 2 * 2 * d


def decoder_layer(d: int, ffn: int) -> int:
    """The encoder's layer, cross-attention's four projections and a third LayerNorm."""
    return encoder_layer(d, ffn) + 4 * (d * d + d) + 2 * d


def test_m2m_100_defaults_by_hand(write_config):
    # M2M100Config(): vocabulary 128,112, d 1,024, 12 + 12 layers of FFN 4,096, a final LayerNorm on each stack; the
    # sinusoidal positions are a buffer, neither counted nor saved.
    d = 1024
    total = 128112 * d + 12 * encoder_layer(d, 4096) + 12 * decoder_layer(d, 4096) + 2 * 2 * d
    assert total == 483_905_536
    assert account(str(write_config({"model_type": "m2m_100"}))).total_params == total


def test_m2m_100_has_no_position_tables_and_no_logits_bias():
    report = account(str(CONFIGS / "synthetic__m2m_100.json"))
    assert not any("embed_positions" in name for name in report.outside_layers)
    assert "final_logits_bias buffer" not in {extra.name for extra in report.checkpoint_extras}


def test_blenderbot_small_defaults_by_hand(write_config):
    # BlenderbotSmallConfig(): vocabulary 50,265, d 512, 8 + 8 layers of FFN 2,048, per stack a position table of
    # exactly 512 rows (no offset) and layernorm_embedding (2d).
    d = 512
    total = 50265 * d + 8 * encoder_layer(d, 2048) + 8 * decoder_layer(d, 2048) + 2 * (512 * d + 2 * d)
    assert total == 85_113_344
    assert account(str(write_config({"model_type": "blenderbot-small"}))).total_params == total


def test_blenderbot_positions_have_no_offset():
    # max_position_embeddings 100: 100 rows × 64 per stack (BART's would be 102)
    report = account(str(CONFIGS / "synthetic__blenderbot.json"))
    assert report.outside_layers["embedding.model.decoder.embed_positions"] == 100 * 64
    assert report.outside_layers["embedding.model.encoder.embed_positions"] == 100 * 64


def test_plbart_positions_keep_fairseqs_offset():
    report = account(str(CONFIGS / "synthetic__plbart.json"))
    assert report.outside_layers["embedding.model.decoder.embed_positions"] == 102 * 64


def test_plbart_sequence_classifier_is_two_labels_wide_by_default():
    # PLBartConfig sets no num_labels: PreTrainedConfig's 2. classification_head: dense 64² + 64, out_proj 64 · 2 + 2.
    report = account(str(CONFIGS / "synthetic__plbart_sequence_classification.json"))
    assert report.outside_layers["other.classification_head.out_proj"] == 64 * 2 + 2
