"""HRM-Text: a fast and a slow stack of gated-attention layers, run H_cycles · (L_cycles + 1) times a token over the
same weights.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__hrm_text.json, synthetic__hrm_text.json, synthetic__hrm_text_plain.json) and
FlopCounterMode counts the same forward (tests/expected/flop_counter.json, synthetic__hrm_text_plain).
"""

import json

from ffncalc import account, flops

from .conftest import ROOT

PLAIN = json.loads((ROOT / "tests" / "configs" / "synthetic__hrm_text_plain.json").read_text())
# synthetic__hrm_text_plain, one layer: q, k, v, gate_proj 64 × 80 each, o 80 × 64, the SwiGLU 3 · 64 × 96
PLAIN_LAYER = 5 * 64 * 80 + 3 * 64 * 96


def test_hrm_text_default_model_by_hand(write_config):
    # HrmTextConfig(): two stacks of 16 layers, H 1,536, 12 heads of 128 (q, k, v, gate, o: 5 · H · 1,536), SwiGLU
    # 4,096, no norm weights; z_L_init H; vocabulary 151,808, untied.
    hidden = 1536
    layer = 5 * hidden * 1536 + 3 * hidden * 4096
    report = account(str(write_config({"model_type": "hrm_text"})))
    assert report.total_params == 2 * 16 * layer + 2 * 151808 * hidden + hidden == 1_447_822_848


def test_hrm_text_counts_both_stacks_once(write_config):
    # num_layers_per_stack 2 (num_hidden_layers 18 is then the slots: 2 · 3 · (2 + 1)), tied
    report = account(str(write_config(PLAIN)))
    assert report.total_params == 2 * 2 * PLAIN_LAYER + 320 * 64 + 64 == 196_672


def test_hrm_text_runs_each_layer_once_a_cycle(write_config):
    # H_cycles 3, L_cycles 2: the fast stack runs 6 times, the slow one 3, 2 layers each: 18 layer runs of
    # 2 · PLAIN_LAYER FLOPs a token, and 4 heads · (20 + 20) per key over 16 keys (non-causal); the head 2 · 64 · 320
    report = flops(str(write_config(PLAIN)), 16, causal=False)
    assert report.prefill.total == 16 * (18 * 2 * PLAIN_LAYER + 18 * 16 * 2 * 4 * 40 + 2 * 64 * 320) == 27_492_352
