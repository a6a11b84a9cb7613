"""NVIDIA's dense Nemotron (Nemotron-4, Minitron): LayerNorm1P with biases and a squared-ReLU MLP.

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_nemotron_layer_by_hand():
    # q and o 64 × 4 · 24 with biases, k and v 64 × 2 · 24 with biases; up 64 → 256 and down with biases;
    # two LayerNorm1P of weight and bias (2 · 64 each). Outside: embedding and head 320 × 64, the final LayerNorm1P.
    attention = 2 * 64 * 96 + 96 + 64 + 2 * (64 * 48 + 48)
    layer = attention + (64 * 256 + 256) + (256 * 64 + 64) + 2 * 2 * 64
    report = account(str(CONFIGS / "synthetic__nemotron.json"))
    assert report.layers[0].params == layer
    assert report.total_params == 2 * layer + 2 * 320 * 64 + 2 * 64


def test_nemotron_without_num_key_value_heads_is_refused_as_transformers_refuses(write_config):
    # NemotronConfig leaves num_key_value_heads None, and the attention divides the heads by it.
    with pytest.raises(InvalidConfigError, match="num_key_value_heads: required"):
        account(str(write_config({"model_type": "nemotron", "hidden_size": 64, "num_attention_heads": 4})))
