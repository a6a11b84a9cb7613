"""Inkling's text model: attention with short convolutions on keys and values and a relative bias mixed per token,
convolutions on each sublayer's output, an MoE whose router weighs its stacked shared experts too.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__inkling_text.json, synthetic__inkling_text.json,
synthetic__inkling_text_legacy.json). Its MoE layers need routing values, which FlopCounterMode on the meta device
does not have: no FLOP record.
"""

from ffncalc import account, flops

HIDDEN = 6144


def test_inkling_text_default_model_by_hand(write_config):
    # InklingTextConfig(): H 6,144, 66 layers: 11 full (every sixth: 64 heads, 8 key-value heads of 128; the bias bank
    # 16 × 1,024) and 55 sliding (64 heads, 16 key-value heads; the bank 16 × 512). Each: q and o H × 8,192, k and v,
    # q/k norms 2 · 128, k_sconv and v_sconv (key-value width × 4), r_proj H × 64 · 16; attn_sconv and mlp_sconv
    # 2 · H · 4; two RMSNorms. Every layer an MoE: router (256 + 2) × H and its global_scale, 256 experts and 2 shared
    # of 3 · H · 3,072. Embeddings and their embed_norm, the final norm, lm_head (vocabulary 201,024).
    hidden, vocab = HIDDEN, 201024
    full = 2 * hidden * 8192 + 2 * hidden * 1024 + 256 + 2 * 1024 * 4 + hidden * 1024 + 16 * 1024
    sliding = 2 * hidden * 8192 + 2 * hidden * 2048 + 256 + 2 * 2048 * 4 + hidden * 1024 + 16 * 512
    common = 2 * hidden * 4 + 2 * hidden + 258 * hidden + 1 + 258 * 3 * hidden * 3072
    report = account(str(write_config({"model_type": "inkling_text"})))
    expected = 11 * full + 55 * sliding + 66 * common + 2 * vocab * hidden + 2 * hidden
    assert report.total_params == expected == 975_340_270_146


def test_inkling_text_router_weighs_the_shared_experts(write_config):
    # 66 MoE layers: each router 258 × H; the shared experts 2 · 3 · H · 3,072 a layer
    report = account(str(write_config({"model_type": "inkling_text"})))
    assert report.moe.router_params == 66 * 258 * HIDDEN
    assert report.moe.shared_expert_params == 66 * 2 * 3 * HIDDEN * 3072


def test_inkling_text_relative_bias_costs_heads_d_rel_reach_a_token(write_config):
    # per token: 11 full layers 2 · 64 · 16 · 1,024, 55 sliding layers 2 · 64 · 16 · 512 (under other)
    report = flops(str(write_config({"model_type": "inkling_text"})), 1)
    assert report.per_token.other == 11 * 2 * 64 * 16 * 1024 + 55 * 2 * 64 * 16 * 512 + 66 * 2 * 2 * HIDDEN * 4
