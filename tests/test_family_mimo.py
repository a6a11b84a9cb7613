"""MiMo-V2-Flash: sliding layers with twice the KV heads and a sink per head, values narrower than queries and
keys, a dense first layer and DeepSeek-style MoE layers without a shared expert.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops, load_config
from ffncalc.api import memory
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

FLASH = str(ROOT / "tests" / "configs" / "synthetic__mimo_v2_flash.json")

# synthetic__mimo_v2_flash: hidden 64, 8 query heads of 12 (values of 8), 2 KV heads (4 in sliding layers),
# q/k/v biases; 7 layers, global 0 and 5 (the first and every sixth); FFN 160 in layer 0, then 8 experts of 24.
H = 64
GLOBAL = (H * 96 + 96) + (H * 2 * 12 + 2 * 12) + (H * 2 * 8 + 2 * 8) + 8 * 8 * H  # q, k, v with biases; o without
SLIDING = (H * 96 + 96) + (H * 4 * 12 + 4 * 12) + (H * 4 * 8 + 4 * 8) + 8 * 8 * H + 8  # … and a sink per head
EXPERT = 3 * H * 24


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_sliding_layers_double_the_kv_heads_and_hold_a_sink_per_head():
    report = account(FLASH)
    assert group(report, 0).components.attention == GLOBAL == 12_936
    assert group(report, 1).components.attention == SLIDING == 15_544
    names = checkpoint_tensors(load_config(FLASH).spec)
    assert names["model.layers.1.self_attn.attention_sink_bias"] == (8,)
    assert "model.layers.0.self_attn.attention_sink_bias" not in names


def test_sliding_window_size_counts_previous_tokens_and_the_query():
    # sliding_window_size 15 → a window of 16 keys; layers 0 and 5 are global.
    windows = [layer.attention.window for layer in load_config(FLASH).spec.layers]
    assert windows == [None, 16, 16, 16, 16, None, 16]


def test_first_layer_dense_the_others_moe_without_a_shared_expert():
    report = account(FLASH)
    assert group(report, 0).components.ffn == 3 * H * 160
    assert group(report, 6).components.ffn == H * 8 + 8 * EXPERT  # router, 8 experts
    total = GLOBAL * 2 + SLIDING * 5 + 3 * H * 160 + 6 * (H * 8 + 8 * EXPERT) + 7 * 2 * H + 2 * 1000 * H + H
    assert report.total_params == total == 487_528
    assert report.active_params == total - 6 * (8 - 2) * EXPERT


def test_router_correction_bias_is_stored_in_each_moe_layer():
    extras = {extra.name: extra for extra in load_config(FLASH).spec.checkpoint_extras}
    bias = extras["router e_score_correction_bias"]
    assert bias.buffer and bias.per_layer == (1, 2, 3, 4, 5, 6)
    assert bias.tensors[0].shape == (8,)


def test_kv_cache_and_scores_use_the_narrower_values():
    # Per token: 2 KV heads · (12 + 8) in the 2 global layers, 4 · (12 + 8) for at most 16 tokens in the 5 sliding
    # ones. BF16, context 64.
    assert memory(FLASH, 64).kv_cache.bytes == (2 * 64 * 2 * 20 + 5 * 16 * 4 * 20) * 2 == 23_040
    # Scores per key: 2 · 8 heads · (12 + 8) in every layer, the sliding ones up to 16 keys.
    assert flops(FLASH, 64).per_token.attention_scores == 2 * 64 * 320 + 5 * 16 * 320


def test_default_model_by_hand(write_config):
    # MiMoV2FlashConfig's defaults: hidden 4,096, 48 layers (9 global: 0, 5, 11 … 47), 64 query heads of 192,
    # values of 128, 4 KV heads (8 sliding, with sinks); layer 0 an FFN of 16,384, then 256 experts of 2,048
    # (8 per token); vocabulary 152,576, untied.
    hidden, expert = 4096, 3 * 4096 * 2048
    glob = hidden * 64 * 192 + hidden * 4 * 192 + hidden * 4 * 128 + 64 * 128 * hidden
    sliding = hidden * 64 * 192 + hidden * 8 * 192 + hidden * 8 * 128 + 64 * 128 * hidden + 64
    moe = hidden * 256 + 256 * expert
    total = 9 * glob + 39 * sliding + 3 * hidden * 16384 + 47 * moe + 48 * 2 * hidden + hidden + 2 * 152576 * hidden
    report = account(str(write_config({"model_type": "mimo_v2_flash"})))
    assert report.total_params == total == 308_778_768_832
    assert report.active_params == total - 47 * (256 - 8) * expert == 15_445_924_288
