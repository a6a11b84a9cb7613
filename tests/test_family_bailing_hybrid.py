"""Ling 3 hybrid (bailing_hybrid): delta-attention layers and a gated MLA layer every layer_group_size, DeepSeek-V3's
MoE after the first dense layers.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__bailing_hybrid.json, synthetic__bailing_hybrid.json). Its MoE layers need
routing values, which FlopCounterMode on the meta device does not have: no FLOP record.
"""

from ffncalc import account, memory

HIDDEN = 2560


def test_bailing_hybrid_default_model_by_hand(write_config):
    # BailingHybridConfig(): H 2,560, 42 layers, 32 heads; MLA (q_proj H × 32 · 192, kv_a H × 576 and its norm 512,
    # kv_b 512 × 32 · 256, o 4,096 × H) with g_proj H × 32 on layers 5, 11 … 41 (7); delta attention on the other 35
    # (heads of 128: q, k, v, f_proj, g_proj 5 · H × 4,096, b_proj H × 32, o 4,096 × H, three convolutions 4,096 × 4,
    # dt_bias 4,096, A_log 32, o_norm 128). Layers 0 and 1 dense (SwiGLU 6,144); 40 MoE layers: router 512 × H, 512
    # experts and one shared of 3 · H · 768. Vocabulary 157,184, untied.
    hidden, vocab = HIDDEN, 157184
    mla = hidden * 32 * 192 + hidden * 576 + 512 + 512 * 32 * 256 + 32 * 128 * hidden + hidden * 32
    delta = 5 * hidden * 4096 + hidden * 32 + 4096 * hidden + 3 * 4096 * 4 + 4096 + 32 + 128
    ffns = 2 * 3 * hidden * 6144 + 40 * (512 * hidden + 513 * 3 * hidden * 768)
    report = account(str(write_config({"model_type": "bailing_hybrid"})))
    expected = 7 * mla + 35 * delta + ffns + 42 * 2 * hidden + 2 * vocab * hidden + hidden
    assert report.total_params == expected == 124_414_191_072


def test_bailing_hybrid_delta_layers_keep_a_fixed_state(write_config):
    # 35 delta layers: 32 heads × 128 × 128 state and three convolution windows of 3 · 4,096 inputs each, BF16;
    # 7 MLA layers cache kv_lora_rank + rope = 576 a token
    report = memory(str(write_config({"model_type": "bailing_hybrid"})), context=1024)
    state = 35 * (32 * 128 * 128 + 3 * 3 * 4096)
    assert report.kv_cache.bytes == 2 * (state + 7 * 576 * 1024)
