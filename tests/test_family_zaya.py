"""ZAYA: Compressed Convolutional Attention and a top-1 MoE behind a router MLP.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__zaya.json, synthetic__zaya.json). Every layer is an MoE, which
FlopCounterMode cannot run on the meta device (routing needs values): no FLOP record.
"""

from ffncalc import account, flops


def test_zaya_default_model_by_hand(write_config):
    # ZayaConfig(): H 2,048, 40 layers of 8 heads (2 key-value heads) of 128, vocabulary 262,272, tied, no biases.
    # CCA: q H × 1,024, k H × 256, v_proj_current and v_proj_delayed H × 128 each, o 1,024 × H; over C = 1,280
    # channels a depthwise convolution of 2 taps (+ bias) and a grouped one of 128 channels a group and 2 taps
    # (+ bias); temp 2. Router: down_proj H × 256 (+ bias), an RMSNorm 256, fc1 and fc2 256 × 256 (+ biases),
    # out_proj 256 × 17 (16 experts and the skip), router_states_scale 256 from layer 1; 16 experts of 3 · H ·
    # 2,048. Two RMSNorms and eight residual vectors of H a layer; the embedding's scale and bias.
    hidden, channels = 2048, 1280
    attention = hidden * (1024 + 256 + 2 * 128) + 1024 * hidden + 3 * channels + channels * 128 * 2 + channels + 2
    ffn = hidden * 256 + 256 + 2 * (256 * 256 + 256) + 256 * 17 + 16 * 3 * hidden * 2048
    layer = attention + ffn + 2 * hidden + 256 + 8 * hidden
    report = account(str(write_config({"model_type": "zaya"})))
    assert report.total_params == 40 * layer + 39 * 256 + 262272 * hidden + 3 * hidden == 8_840_488_784


def test_zaya_token_runs_one_expert_and_the_router_mlp(write_config):
    # per token and layer, besides attention: down_proj 2,048 × 256, fc1, fc2 256 × 256, out_proj 256 × 17, and one
    # expert 3 · 2,048 · 2,048 (the skip class costs nothing)
    report = flops(str(write_config({"model_type": "zaya"})), 1)
    per_layer = 2048 * 256 + 2 * 256 * 256 + 256 * 17 + 3 * 2048 * 2048
    assert report.per_token.ffn == 40 * 2 * per_layer


def test_zaya_counts_both_convolutions_with_the_attention_projections(write_config):
    # per layer: q, k, the two value halves, o, and the convolutions' 1,280 · 2 + 1,280 · 128 · 2 weights
    report = flops(str(write_config({"model_type": "zaya"})), 1)
    per_layer = 2048 * (1024 + 256 + 256) + 1024 * 2048 + 1280 * 2 + 1280 * 128 * 2
    assert report.per_token.attention_projections == 40 * 2 * per_layer
