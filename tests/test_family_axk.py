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


# --- A.X-K2 ------------------------------------------------------------------------------------------------------


def test_axk2_default_model_by_hand(write_config):
    # AXK2Config(): H 2,048, 48 layers of 32 heads, q_lora_rank 384, kv_lora_rank 128, qk 64 + 32, v 64, vocabulary
    # 163,840, untied. The attention: q_a H × 384 and its norm, q_gate_proj reading 2 · 384 (the latent before and
    # after its norm) into 32 · (96 + 64) (each head's query and its output gate), kv_a H × (128 + 32) and its norm,
    # kv_b 128 × 32 · (64 + 64), o 32 · 64 × H; the indexer wq_b 384 × 16 · 128, wk H × 128, its LayerNorm 2 · 128,
    # weights_proj H × 16. Each gated norm: H, and its gate MLP H × 16 and 16 × H.
    hidden = 2048
    mla = hidden * 384 + 384 + 768 * 32 * 160 + hidden * 160 + 128 + 128 * 32 * 128 + 32 * 64 * hidden
    attention = mla + 384 * 16 * 128 + hidden * 128 + 2 * 128 + hidden * 16
    gated_norm = hidden + 2 * hidden * 16
    dense = attention + 3 * hidden * 5120 + gated_norm + hidden  # layer 0: a plain post_attention_layernorm
    sparse = attention + 128 * hidden + 129 * 3 * hidden * 512 + 2 * gated_norm  # router, 128 experts + 1 shared
    report = account(str(write_config({"model_type": "axk2"})))
    assert report.total_params == dense + 47 * sparse + 2 * 163840 * hidden + hidden == 20_314_494_976


AXK2_SMALL = {
    "model_type": "axk2",
    "vocab_size": 320,
    "hidden_size": 64,
    "intermediate_size": 96,
    "moe_intermediate_size": 24,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "n_routed_experts": 8,
    "n_shared_experts": 2,
    "num_experts_per_tok": 2,
    "q_lora_rank": 48,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 20,
    "index_n_heads": 2,
    "index_head_dim": 12,
    "gated_norm_rank": 6,
}
# q_a 64 × 48 and its norm, q_gate_proj 96 × 4 · (24 + 20), kv_a 64 × 40 and its norm, kv_b 32 × 4 · 36,
# o 80 × 64; the indexer 48 × 24, 64 × 12, its LayerNorm 2 · 12, 64 × 2
AXK2_ATTENTION = 64 * 48 + 48 + 96 * 4 * 44 + 64 * 40 + 32 + 32 * 4 * 36 + 80 * 64 + (48 * 24 + 64 * 12 + 24 + 64 * 2)
AXK2_GATED_NORM = 64 + 2 * 64 * 6


def test_axk2_query_projection_reads_twice_the_latent_and_emits_the_output_gate(write_config):
    report = account(str(write_config(AXK2_SMALL | {"mlp_layer_types": ["dense"] * 3})))
    layer = AXK2_ATTENTION + 3 * 64 * 96 + AXK2_GATED_NORM + 64
    assert report.components.attention == 3 * (AXK2_ATTENTION - 48 - 32 - 24)  # its three norms count as norms
    assert report.total_params == 3 * layer + 2 * 320 * 64 + 64 == 202_232


def test_axk2_gates_post_attention_layernorm_in_moe_layers_only(write_config):
    # legacy keys: first_k_dense_replace 1, moe_layer_freq 1 → layer 0 dense, layers 1 and 2 sparse
    report = account(str(write_config(AXK2_SMALL)))
    assert report.components.other == 3 * 2 * 64 * 6 + 2 * 2 * 64 * 6  # every input norm's gate, two sparse layers'
    sparse = AXK2_ATTENTION + 8 * 64 + 8 * 3 * 64 * 24 + 3 * 64 * 48 + 2 * AXK2_GATED_NORM
    dense = AXK2_ATTENTION + 3 * 64 * 96 + AXK2_GATED_NORM + 64
    assert report.total_params == dense + 2 * sparse + 2 * 320 * 64 + 64 == 260_088
