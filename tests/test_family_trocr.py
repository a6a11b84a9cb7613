"""TrOCR's decoder as a causal LM: BART's decoder layers, cross-attention reading the image encoder's width.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__trocr.json, synthetic__trocr.json, synthetic__trocr_sinusoidal.json).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_trocr_default_model_by_hand(write_config):
    # TrOCRConfig(): d_model 1,024, 12 layers of self- and cross-attention (4 · (1,024² + 1,024) each), fc1 and fc2
    # 1,024 ↔ 4,096 with biases, 3 LayerNorms; embed_tokens 50,265 rows, learned positions 512 + 2, the embeddings'
    # LayerNorm; the head tied.
    d = 1024
    layer = 2 * 4 * (d * d + d) + 2 * d * 4096 + 4096 + d + 3 * 2 * d
    report = account(str(write_config({"model_type": "trocr"})))
    assert report.total_params == 12 * layer + 50265 * d + 514 * d + 2 * d == 253_559_808


def test_trocr_cross_attention_keys_and_values_read_the_encoders_width():
    # cross_attention_hidden_size 48: k and v 48 → 64, q and out_proj 64 → 64, all biased; 2 layers
    report = account(str(CONFIGS / "synthetic__trocr.json"))
    assert report.components.cross_attention == 2 * (2 * (48 * 64 + 64) + 2 * (64 * 64 + 64))


def test_trocr_sinusoidal_positions_hold_no_parameters():
    # use_learned_position_embeddings false: only the tied token table, 320 × 64, no layernorm_embedding
    report = account(str(CONFIGS / "synthetic__trocr_sinusoidal.json"))
    assert (report.components.embedding, report.components.lm_head) == (320 * 64, 0)


def test_trocr_sinusoidal_positions_need_a_padding_row(write_config):
    with pytest.raises(InvalidConfigError, match="pad_token_id"):
        account(
            str(write_config({"model_type": "trocr", "use_learned_position_embeddings": False, "pad_token_id": None}))
        )
