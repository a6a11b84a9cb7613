"""Ministral and Ministral 3 (Devstral Small 2's language model): Mistral's layer, windows by layer_types.

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_devstral_small_2_language_model_by_hand():
    # ministral3 text model: H 5,120, FFN 32,768, 40 layers of 32 query heads and 8 KV heads of 128, vocabulary
    # 131,072, untied (the wrapper's tie_word_embeddings is false). A layer: q and o 5,120 × 4,096, k and v
    # 5,120 × 1,024, SwiGLU 3 · H · I, two RMSNorms; outside: embedding and head V · H, the final RMSNorm.
    hidden, ffn, vocab = 5120, 32768, 131072
    layer = 2 * hidden * 4096 + 2 * hidden * 1024 + 3 * hidden * ffn + 2 * hidden
    report = account("mistralai/Devstral-Small-2-24B-Instruct-2512")
    assert report.language_model_params == 40 * layer + 2 * vocab * hidden + hidden == 23_572_403_200
    assert report.layers[0].window is None  # sliding_window null


def test_ministral_without_head_dim_is_refused_as_transformers_refuses(write_config):
    # MinistralConfig leaves head_dim None, and the attention's scaling head_dim ** -0.5 then fails.
    with pytest.raises(InvalidConfigError, match="head_dim: required"):
        account(str(write_config({"model_type": "ministral", "hidden_size": 64, "num_attention_heads": 4})))


def test_ministral_layer_types_give_the_window_to_sliding_layers():
    sliding, full = account(str(CONFIGS / "synthetic__ministral.json")).layers
    assert sliding.indices == [0, 2] and sliding.window == 128
    assert full.indices == [1, 3] and full.window is None
    # head_dim 32 (not 64 / 4): q 64 → 4 · 32
    assert sliding.parts["attention.q"] == 64 * 128


def test_ministral_slides_everywhere_by_default(write_config):
    config = {
        "model_type": "ministral",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "head_dim": 16,
        "num_hidden_layers": 3,
    }
    (group,) = account(str(write_config(config))).layers
    assert group.indices == [0, 1, 2] and group.window == 4096


def test_ministral3_defaults_to_head_dim_128_and_full_attention(write_config):
    config = {
        "model_type": "ministral3",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_hidden_layers": 1,
    }
    (group,) = account(str(write_config(config))).layers
    assert group.window is None
    assert group.parts["attention.q"] == 64 * 4 * 128 and group.parts["attention.k"] == 64 * 2 * 128
