"""Aleph Alpha's Kolibri-1: EXAONE 4's attention, an MoE in every layer, GLM-4's four norms.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__kolibri1.json, synthetic__kolibri1.json).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError


def test_kolibri1_default_model_by_hand(write_config):
    # Kolibri1Config(): H 2,560, 50 layers of 48 query and 4 KV heads of 128, vocabulary 128,000, untied.
    # Attention: q and o H × 6,144, k and v H × 512, q/k norms 128 each, no biases. Every layer an MoE: a router
    # 384 × H, 384 routed experts and a shared MLP, each 3 · H · 512; four norms.
    hidden, vocab = 2560, 128000
    layer = 2 * hidden * 6144 + 2 * hidden * 512 + 2 * 128 + 384 * hidden + 385 * 3 * hidden * 512 + 4 * hidden
    report = account(str(write_config({"model_type": "kolibri1"})))
    assert report.total_params == 50 * layer + 2 * vocab * hidden + hidden == 78_103_055_360


def test_kolibri1_default_layer_types_attend_fully_every_fifth_layer(write_config):
    report = account(str(write_config({"model_type": "kolibri1", "num_hidden_layers": 10})))
    full = [i for group in report.layers if group.window is None for i in group.indices]
    assert sorted(full) == [4, 9]


def test_kolibri1_refuses_sliding_layers_without_a_window(write_config):
    # Kolibri1Config.validate_architecture: sliding-attention layers need a positive sliding_window
    with pytest.raises(InvalidConfigError, match="sliding_window"):
        account(str(write_config({"model_type": "kolibri1", "sliding_window": None})))


def test_kolibri1_without_sliding_layers_needs_no_window(write_config):
    config = {"model_type": "kolibri1", "num_hidden_layers": 2, "sliding_window": None}
    report = account(str(write_config(config | {"layer_types": ["full_attention", "full_attention"]})))
    assert [group.window for group in report.layers] == [None]
