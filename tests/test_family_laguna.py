"""Poolside's Laguna: gated attention with a head count per layer, dense then MoE with a shared expert.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__laguna.json, synthetic__laguna.json).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT


def test_laguna_default_model_by_hand(write_config):
    # LagunaConfig(): H 2,048, 40 layers of 48 query and 8 KV heads of 128, vocabulary 100,352, untied.
    # Attention: q and o H × 6,144, k and v H × 1,024, g_proj one unit a head (H × 48), q/k norms 128 each.
    # Layer 0 dense (SwiGLU 3 · H · 8,192); the 39 others: 256 experts and a shared expert of 3 · H · 512,
    # router 256 × H and its correction bias 256.
    hidden, vocab = 2048, 100352
    expert = 3 * hidden * 512
    attention = 2 * hidden * 6144 + 2 * hidden * 1024 + hidden * 48 + 2 * 128
    moe = 256 * expert + expert + 256 * hidden + 256
    report = account(str(write_config({"model_type": "laguna"})))
    total = 40 * (attention + 2 * hidden) + 3 * hidden * 8192 + 39 * moe + 2 * vocab * hidden + hidden
    assert report.total_params == total == 33_189_975_808


def test_laguna_heads_per_layer_and_per_element_gate():
    # synthetic: layer 1 has 6 heads of 24: q and o 64 × 144 each, g_proj per element 64 × 144, k and v 64 × 48
    report = account(str(ROOT / "tests" / "configs" / "synthetic__laguna.json"))
    layer = next(group for group in report.layers if 1 in group.indices)
    assert layer.components.attention == 64 * 144 + 144 * 64 + 64 * 144 + 2 * 64 * 48


@pytest.mark.parametrize("field", ["mlp_layer_types", "num_attention_heads_per_layer"])
def test_laguna_per_layer_lists_of_the_wrong_length_are_refused(write_config, field):
    value = ["dense", "sparse"] if field == "mlp_layer_types" else [4, 4]
    config = {"model_type": "laguna", "num_hidden_layers": 3, field: value}
    with pytest.raises(InvalidConfigError, match=f"{field} has 2 entries for 3 layers"):
        account(str(write_config(config)))
