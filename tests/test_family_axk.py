"""SK Telecom's A.X-K1: DeepSeek-V3's latent attention and MoE, with an RMSNorm after each MoE block.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__axk1.json, synthetic__axk1.json; the legacy keys' model checked once by
building it on the meta device: 204,080).
"""

from ffncalc import account

SMALL = {
    "model_type": "axk1",
    "vocab_size": 320,
    "hidden_size": 64,
    "intermediate_size": 96,
    "moe_intermediate_size": 24,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "n_routed_experts": 8,
    "n_group": 2,
    "topk_group": 1,
    "q_lora_rank": 48,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 20,
}
# SMALL's attention: q_a 64 × 48 and its norm 48, q_b 48 × 4 · 24, kv_a 64 × (32 + 8) and its norm 32,
# kv_b 32 × 4 · (16 + 20), o 4 · 20 × 64.
SMALL_ATTENTION = 64 * 48 + 48 + 48 * 4 * 24 + 64 * 40 + 32 + 32 * 4 * 36 + 4 * 20 * 64
SMALL_DENSE = SMALL_ATTENTION + 3 * 64 * 96 + 2 * 64
# router 8 × 64, 8 experts and one shared of 3 · 64 · 24, three norms (post_mlp_layernorm the third)
SMALL_SPARSE = SMALL_ATTENTION + 8 * 64 + 9 * 3 * 64 * 24 + 3 * 64


def test_axk1_default_model_by_hand(write_config):
    # AXK1Config(): H 7,168, 61 layers of 64 heads, q_lora_rank 1,536, kv_lora_rank 512, qk 128 + 64, v 128,
    # vocabulary 163,840, untied. Layer 0 dense (SwiGLU 18,432); layers 1-60 sparse: a router 192 × H, 192
    # experts and one shared expert of 3 · H · 2,048, and post_mlp_layernorm beside the two layer norms.
    hidden, vocab = 7168, 163840
    attention = hidden * 1536 + 1536 + 1536 * 64 * 192 + hidden * 576 + 512 + 512 * 64 * 256 + 64 * 128 * hidden
    dense = attention + 3 * hidden * 18432 + 2 * hidden
    sparse = attention + 192 * hidden + 193 * 3 * hidden * 2048 + 3 * hidden
    report = account(str(write_config({"model_type": "axk1"})))
    assert report.total_params == dense + 60 * sparse + 2 * vocab * hidden + hidden == 518_983_052_288


def test_axk1_reads_the_legacy_first_k_dense_replace_and_moe_layer_freq(write_config):
    # first_k_dense_replace 0 and moe_layer_freq 2: layers 0 and 2 sparse, layer 1 dense (AXK1Config.__post_init__)
    config = SMALL | {"first_k_dense_replace": 0, "moe_layer_freq": 2}
    report = account(str(write_config(config)))
    assert report.total_params == 2 * SMALL_SPARSE + SMALL_DENSE + 2 * 320 * 64 + 64 == 204_080


def test_axk1_mlp_layer_types_outrank_the_legacy_keys(write_config):
    config = SMALL | {"first_k_dense_replace": 0, "mlp_layer_types": ["dense", "dense", "dense"]}
    report = account(str(write_config(config)))
    assert report.total_params == 3 * SMALL_DENSE + 2 * 320 * 64 + 64 == 156_848
    assert report.moe is None
