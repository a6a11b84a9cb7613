"""Beam: Qwen3-MoE's attention with an output gate (gate_proj and a bias per head), four norms a layer, sliding and
full layers, three dense layers before the MoE ones.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__beam.json, synthetic__beam.json).
"""

from ffncalc import account, flops

SMALL = {
    "model_type": "beam",
    "vocab_size": 320,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 5,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 24,
    "sliding_window": 8,
    "moe_intermediate_size": 24,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "n_group": 2,
    "topk_group": 1,
}
# q 64 × 96, k and v 64 × 48, o 96 × 64, q_norm and k_norm 24 each, gate_proj 64 × 96, gate_bias 4
SMALL_ATTENTION = 64 * 96 + 2 * 64 * 48 + 96 * 64 + 2 * 24 + 64 * 96 + 4


def test_beam_default_model_by_hand(write_config):
    # BeamConfig(): H 5,120, 52 layers of 48 heads (8 key-value heads) of 128, vocabulary 151,936, untied. Three
    # dense layers (SwiGLU 20,480), then 49 MoE layers: a router 256 × H and 256 experts of 3 · H · 2,560. Four
    # RMSNorms a layer.
    hidden = 5120
    attention = 3 * hidden * 6144 + 2 * hidden * 1024 + 2 * 128 + 48
    dense = attention + 3 * hidden * 20480 + 4 * hidden
    sparse = attention + 256 * hidden + 256 * 3 * hidden * 2560 + 4 * hidden
    report = account(str(write_config({"model_type": "beam"})))
    assert report.total_params == 3 * dense + 49 * sparse + 2 * 151936 * hidden + hidden == 501_267_599_808


def test_beam_layers_take_three_dense_then_sparse_by_default(write_config):
    report = account(str(write_config(SMALL)))
    dense = SMALL_ATTENTION + 3 * 64 * 96 + 4 * 64
    sparse = SMALL_ATTENTION + 8 * 64 + 8 * 3 * 64 * 24 + 4 * 64
    assert report.total_params == 3 * dense + 2 * sparse + 2 * 320 * 64 + 64 == 295_492


def test_beam_makes_every_sixth_layer_and_the_last_full(write_config):
    # 5 layers: 0-3 slide within 8 keys, layer 4 (the last) attends to all; per key 2 · 4 heads · (24 + 24)
    report = flops(str(write_config(SMALL)), 64)
    assert report.per_token.attention_scores == 4 * 8 * 2 * 4 * 48 + 64 * 2 * 4 * 48
