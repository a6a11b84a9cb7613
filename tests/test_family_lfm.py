"""LFM2 and LFM2-MoE: gated short convolutions in most layers, attention with per-head q/k norms in the others.

Every expected figure is derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account, crossover, flops
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError

from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"
LFM2 = BUNDLED / "LiquidAI__LFM2-1.2B.json"
MOE = CONFIGS / "synthetic__lfm2_moe.json"


def short_conv(hidden, kernel, bias):
    """in_proj H → 3H (B, C, x), a depthwise conv of KERNEL taps, out_proj H → H; conv_bias on all three."""
    return hidden * 3 * hidden + hidden * kernel + hidden * hidden + (3 * hidden + hidden + hidden if bias else 0)


def test_lfm2_1_2b_by_hand():
    # hidden 2048, 16 layers: attention at 2, 5, 8, 10, 12, 14 (32 heads of 64, 8 KV heads, q/k norms of 64), short
    # convolutions of 3 taps elsewhere; block_ff_dim 12288 → int(2 · 12288 / 3) = 8192, a multiple of 256 already;
    # tied, vocabulary 65536.
    attention = 2 * 2048 * 2048 + 2 * 2048 * 512 + 2 * 64
    layer_rest = 3 * 2048 * 8192 + 2 * 2048  # MLP and the operator and ffn norms
    total = 10 * short_conv(2048, 3, False) + 6 * attention + 16 * layer_rest + 65536 * 2048 + 2048
    assert account(str(LFM2)).total_params == total == 1_170_340_608  # transformers' docs: 1.2B


def test_the_ffn_width_is_two_thirds_times_the_multiplier_rounded_up():
    # synthetic__lfm2: block_ff_dim 200 → int(400 / 3) = 133 → int(1.5 · 133) = 199 → 32 · ceil(199 / 32) = 224
    report = account(str(CONFIGS / "synthetic__lfm2.json"))
    assert report.layers[0].parts["ffn.gate"] == 64 * 224
    # without block_auto_adjust_ff_dim, intermediate_size as it is
    plain = account(str(CONFIGS / "synthetic__lfm2_plain_ffn_width.json"))
    assert plain.layers[0].parts["ffn.gate"] == 64 * 100


def test_a_short_convolution_costs_its_projections_and_conv_and_keeps_kernel_minus_one_inputs():
    # LFM2-1.2B's 10 conv layers: in_proj and out_proj, 2 FLOPs per weight; the conv 2 · 2048 · 3; no recurrent state
    report = flops(str(LFM2), 4096).per_token
    assert report.mixer == 10 * 2 * (2048 * 6144 + 2048 * 2048)
    assert report.mixer_state == 10 * 2 * 2048 * 3
    cache = memory(str(LFM2), 4096).kv_cache  # bfloat16
    assert cache.bytes == 6 * 8 * (64 + 64) * 4096 * 2 + 10 * 2048 * 2 * 2


def test_lfm2_attention_overtakes_its_mlps_where_the_curves_meet():
    # MLPs: 16 · 2 · 3 · 2048 · 8192; scores: 6 layers · 2 · 32 · (64 + 64) per key → n* = 805,306,368 · 2 / 49,152
    assert crossover(str(LFM2), "128k").crossover_context == 16 * 2 * 3 * 2048 * 8192 // (6 * 2 * 32 * 128) == 32_768


def test_lfm2_moe_dense_then_experts_by_hand():
    # hidden 64; layers conv, attention, conv, conv (conv of 4 taps with biases; 4 heads of 16 over 2 KV heads);
    # layer 0 a dense MLP of 112, the others 6 experts of 24 (2 per token) routed by a 64 → 6 gate; untied.
    expert = 3 * 64 * 24
    moe = 64 * 6 + 6 * expert
    attention = 2 * 64 * 64 + 2 * 64 * 32 + 2 * 16
    total = 3 * short_conv(64, 4, True) + attention + 3 * 64 * 112 + 3 * moe + 4 * 2 * 64 + 2 * 1000 * 64 + 64
    report = account(str(MOE))
    assert report.total_params == total == 297_376
    assert report.active_params == total - 3 * 4 * expert
    # the routing-bias buffers the checkpoints store: one per expert in each MoE layer
    assert [(extra.name, extra.elements) for extra in report.checkpoint_extras] == [("router expert_bias", 3 * 6)]


def test_lfm2_moe_without_layer_types_is_refused_as_transformers_cannot_build_it(write_config):
    config = {k: v for k, v in json.loads(MOE.read_text()).items() if k != "layer_types"}
    with pytest.raises(InvalidConfigError, match="layer_types: required"):
        account(str(write_config(config)))
