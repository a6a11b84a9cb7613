"""Dory: an nGPT decoder (weightless L2 norms, per-channel scales) whose middle layers loop over the same weights.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__dory.json, synthetic__dory.json, synthetic__dory_saved.json) and
FlopCounterMode counts the same forward (tests/expected/flop_counter.json, synthetic__dory_saved).
"""

import json

from ffncalc import account, flops

from .conftest import ROOT

SAVED = json.loads((ROOT / "tests" / "configs" / "synthetic__dory_saved.json").read_text())
# synthetic__dory_saved, one layer: q, g_proj and o 64 × 96 each, k and v 64 × 48, sqk and s_gate 96 each, the MLP
# 3 · 64 × 96, suv_gate and suv_up 96 each, lambda_1 and lambda_2 64 each
SAVED_LAYER = 3 * 64 * 96 + 2 * 64 * 48 + 2 * 96 + 3 * 64 * 96 + 2 * 96 + 2 * 64


def test_dory_default_model_by_hand(write_config):
    # DoryConfig(): H 2,560, 36 layers of 16 heads (4 key-value heads) of 256, SwiGLU 7,168, vocabulary 131,072,
    # untied; no norm holds a weight; the head's logit_scale holds one per token.
    hidden = 2560
    layer = 3 * hidden * 4096 + 2 * hidden * 1024 + 2 * 4096 + 3 * hidden * 7168 + 2 * 7168 + 2 * hidden
    report = account(str(write_config({"model_type": "dory"})))
    assert report.total_params == 36 * layer + 2 * 131072 * hidden + 131072 == 3_975_229_440
    assert report.components.norm == 0


def test_dory_reads_the_saved_two_blocks_a_layer_form(write_config):
    # num_hidden_layers 10 with an "mlp" entry after each layer type: 5 layers (DoryConfig.__post_init__), tied
    report = account(str(write_config(SAVED)))
    assert report.total_params == 5 * SAVED_LAYER + 320 * 64 + 320 == 238_400


def test_dory_runs_its_recurrent_layers_once_a_loop(write_config):
    # 1 input layer, 2 recurrent layers run 3 times, 2 output layers: 9 layer runs of 2 · SAVED_LAYER's matmul
    # weights (the scales multiply elementwise), and 4 heads · (24 + 24) per key at 16 keys (non-causal)
    matmuls = 3 * 64 * 96 + 2 * 64 * 48 + 3 * 64 * 96
    report = flops(str(write_config(SAVED)), 16, causal=False)
    assert report.prefill.total == 16 * (9 * 2 * matmuls + 9 * 16 * 2 * 4 * 48 + 2 * 64 * 320) == 13_926_400
