"""LFM3: LFM2's short convolutions and attention, sliding-window layers, a sigmoid gate per attention head and norms
on each block's output.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__lfm3.json, synthetic__lfm3.json, synthetic__lfm3_plain.json).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__lfm3.json"


def test_lfm3_default_model_by_hand(write_config):
    # Lfm3Config(): H 2,048, 24 layers, vocabulary 128,000, tied. layer_types by default: full attention at 2, 6 … 22
    # (6), sliding at 4, 8 … 20 (5), a short convolution in the 13 others. Attention: q and o H × 16 · 128, k and v
    # H × 4 · 128, q/k norms 128 each, the gate H × 16. Convolution: in_proj H × 3H, out_proj H × H, 7 taps a channel.
    # Every layer: w1, w3, w2 of 3 · H · 7,680 and four RMSNorms (sandwich norms on).
    hidden = 2048
    attention = 2 * hidden * 2048 + 2 * hidden * 512 + 2 * 128 + hidden * 16
    conv = 3 * hidden * hidden + hidden * hidden + 7 * hidden
    total = 24 * (3 * hidden * 7680 + 4 * hidden) + 11 * attention + 13 * conv + 128000 * hidden + hidden
    report = account(str(write_config({"model_type": "lfm3"})))
    assert report.total_params == total == 1_728_801_536


def test_lfm3_sandwich_norms_and_the_gate_can_be_left_out(write_config):
    # Without them a layer loses two RMSNorms of H = 64, and an attention layer its gate (64 × 4): 6 layers, 3 attend.
    config = json.loads(SYNTHETIC.read_text())
    plain = {**config, "use_sandwich_norm": False, "use_attention_gate": False}
    difference = account(str(SYNTHETIC)).total_params - account(str(write_config(plain))).total_params
    assert difference == 6 * 2 * 64 + 3 * 64 * 4


def test_lfm3_kv_cache_holds_attention_layers_keys_and_the_convolutions_window():
    # synthetic at 100 tokens: the full layer caches 100 keys and values of 2 heads · 24, the two sliding layers 8
    # each; the three convolutions keep their last 2 inputs of 64 channels. BF16: 2 bytes.
    report = memory(str(SYNTHETIC), 100, kv_dtype="bf16")
    assert report.kv_cache.bytes == ((100 + 2 * 8) * 2 * 48 + 3 * 2 * 64) * 2


def test_lfm3_gate_costs_one_unit_a_head():
    # Per token, the three attention layers' gates: 2 · 64 · 4 FLOPs each, counted with the attention's projections.
    gated = flops(str(SYNTHETIC), 1).per_token.attention_projections
    projections = 2 * (64 * 96 + 2 * 64 * 48 + 96 * 64)
    assert gated == 3 * (projections + 2 * 64 * 4)


def test_lfm3_sliding_layers_without_a_window_are_refused(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "sliding_window": None}
    with pytest.raises(InvalidConfigError, match="sliding_window"):
        account(str(write_config(config)))
