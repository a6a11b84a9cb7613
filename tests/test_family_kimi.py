"""Kimi Linear: Kimi Delta Attention layers beside DeepSeek-V3's MLA, and DeepSeek-V3's MoE.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__kimi_linear.json:
hidden 128, 5 layers, layer 4 (1-indexed) MLA, the others KDA with 4 heads of 16 and kernel 4; MLA with 4
heads, kv_lora 32, qk 16 + 8, v 24; 8 experts of 48 (2 per token), 1 shared; MLP 320 in layer 0).
"""

import json

from ffncalc import account, flops

from .conftest import ROOT

KIMI = ROOT / "tests" / "configs" / "synthetic__kimi_linear.json"
HIDDEN, INNER = 128, 4 * 16


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_kimi_delta_attention_layer_by_hand():
    # q, k, v: H → 4 · 16 each, each through its own depthwise conv of 4 (no bias); forget gate f_a H → 16,
    # f_b 16 → 64, dt_bias 64, A_log one per head; b_proj H → 4; output gate g_a H → 16, g_b 16 → 64; an
    # RMSNorm of 16 per head; o_proj 64 → H. Layer 0's MLP is dense (first_k_dense_replace 1).
    kda = 3 * HIDDEN * INNER + 3 * INNER * 4 + HIDDEN * 16 + 16 * INNER + INNER + 4 + HIDDEN * 4
    kda += HIDDEN * 16 + 16 * INNER + 16 + INNER * HIDDEN
    assert group(account(str(KIMI)), 0).params == kda + 3 * HIDDEN * 320 + 2 * HIDDEN


def test_linear_attn_config_numbers_its_layers_from_one():
    kinds = {index: g.attention_kind for g in account(str(KIMI)).layers for index in g.indices}
    assert kinds == {
        0: "kimi_delta_attention",
        1: "kimi_delta_attention",
        2: "kimi_delta_attention",
        3: "mla",
        4: "kimi_delta_attention",
    }


def test_kda_state_update_is_seven_flops_per_state_element_plus_its_convolutions():
    # 4 KDA layers, each a 16 × 16 state per head (as Gated DeltaNet) and three convs of 64 channels × 4.
    per_layer = 7 * 4 * 16 * 16 + 3 * 2 * INNER * 4
    assert flops(str(KIMI), 8192).per_token.mixer_state == 4 * per_layer


def test_only_the_mla_layer_grows_with_context():
    # 2 · 4 heads · ((16 + 8) + 24) per key in the one MLA layer.
    assert flops(str(KIMI), 1000).per_token.attention_scores == 2 * 4 * 48 * 1000


def test_kimi_linear_never_ties_its_head(write_config):
    config = {**json.loads(KIMI.read_text()), "tie_word_embeddings": True}
    assert account(str(write_config(config))).components.lm_head == 1000 * HIDDEN
