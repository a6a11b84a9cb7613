"""Lara Mini: Gated DeltaNet and attention layers by layer_types, an MoE with an ungated shared expert in each.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__lara_mini.json, synthetic__lara_mini.json). Every layer is an MoE, which
FlopCounterMode cannot run on the meta device (routing needs values): no FLOP record.
"""

from ffncalc import account, flops


def test_lara_mini_default_model_by_hand(write_config):
    # LaraMiniConfig(): H 1,024, 34 layers in the period linear, sliding, linear, full, sliding: 14 Gated DeltaNets
    # and 20 attentions. DeltaNet: 8 key heads and 16 value heads of 128; in_proj H × (2 · 1,024 + 2,048 + 2,048 +
    # 16 + 16), a convolution of 4,096 channels × 4, dt_bias and A_log 16 each, out_norm 128, out_proj 2,048 × H.
    # Attention: 16 heads (4 key-value heads) of 128, q/k norms 128 each. MoE: router 128 × H, 128 experts and the
    # shared expert of 3 · H · 512. Vocabulary 151,936, tied.
    hidden = 1024
    deltanet = hidden * (4096 + 2048 + 32) + 4096 * 4 + 32 + 128 + 2048 * hidden
    attention = 2 * hidden * 2048 + 2 * hidden * 512 + 2 * 128
    moe = 128 * hidden + 129 * 3 * hidden * 512
    report = account(str(write_config({"model_type": "lara_mini"})))
    expected = 14 * deltanet + 20 * attention + 34 * (moe + 2 * hidden) + 151936 * hidden + hidden
    assert report.total_params == expected == 7_281_684_672


def test_lara_mini_layer_kinds_follow_the_period_of_five(write_config):
    # 5 layers: linear, sliding, linear, full, sliding; a sliding window of 8 keys, 4 heads of 24 + 24 per key
    config = {"model_type": "lara_mini", "num_hidden_layers": 5, "hidden_size": 64, "num_attention_heads": 4}
    config |= {"num_key_value_heads": 2, "head_dim": 24, "sliding_window": 8, "vocab_size": 320}
    report = flops(str(write_config(config)), 64)
    assert report.per_token.attention_scores == 2 * 8 * 2 * 4 * 48 + 64 * 2 * 4 * 48
    # two DeltaNets at the default widths: in_proj 64 × 6,176, conv 4,096 × 4, dt_bias and A_log 16 each, out_proj
    # 2,048 × 64 (out_norm counts with the norms)
    assert account(str(write_config(config))).components.mixer == 2 * (64 * 6176 + 4096 * 4 + 32 + 2048 * 64)
