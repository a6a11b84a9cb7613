"""Jamba: Mamba layers with attention every attn_layer_period-th, and a MoE FFN every expert_layer_period-th.

Every expected figure is derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import BUNDLED, ROOT

JAMBA = BUNDLED / "ai21labs__Jamba-v0.1.json"
SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__jamba.json"


def mamba_mixer(hidden, inner, state, dt_rank, kernel, proj_bias, conv_bias):
    """in_proj, conv, x_proj, dt_proj (+ bias), A_log, D, out_proj, and Jamba's RMSNorms on dt, B and C."""
    return (
        hidden * 2 * inner
        + (2 * inner if proj_bias else 0)
        + inner * kernel
        + (inner if conv_bias else 0)
        + inner * (dt_rank + 2 * state)
        + dt_rank * inner
        + inner
        + inner * state
        + inner
        + inner * hidden
        + (hidden if proj_bias else 0)
        + dt_rank
        + 2 * state
    )


def test_layers_attend_and_route_by_period_and_offset():
    # synthetic__jamba: 6 layers; attention where i % 4 == 1, MoE where i % 3 == 2
    kinds = {i: (g.attention_kind, g.ffn_kind) for g in account(str(SYNTHETIC)).layers for i in g.indices}
    assert kinds == {
        0: ("mamba", "dense"),
        1: ("gqa", "dense"),
        2: ("mamba", "moe"),
        3: ("mamba", "dense"),
        4: ("mamba", "dense"),
        5: ("gqa", "moe"),
    }


def test_synthetic_jamba_by_hand():
    # hidden 64, MLP 96; 4 heads of 16 over 2 KV heads; 4 experts, 2 per token; mamba 3 · 64 wide, state 8, kernel 3,
    # dt_rank ceil(64 / 16) = 4, biased projections, unbiased conv; tied, vocabulary 1000.
    mamba = mamba_mixer(64, 192, 8, 4, 3, proj_bias=True, conv_bias=False)
    attention = 2 * 64 * 64 + 2 * 64 * 32
    mlp, moe = 3 * 64 * 96, 64 * 4 + 4 * 3 * 64 * 96
    norms = 2 * 64
    # Mamba in layers 0, 2, 3, 4, attention in 1 and 5; MoE in 2 and 5, dense MLPs in the other four
    total = 4 * mamba + 2 * attention + 4 * mlp + 2 * moe + 6 * norms + 1000 * 64 + 64
    report = account(str(SYNTHETIC))
    assert report.total_params == total
    assert report.active_params == total - 2 * 2 * 3 * 64 * 96  # 2 of 4 experts idle in each MoE layer


def test_jamba_v01_total_and_active_by_hand():
    # 32 layers: attention in 4 (i % 8 == 4), Mamba in 28 (8192 wide, state 16, dt_rank 256, kernel 4, biased conv);
    # MoE of 16 experts (2 per token) in the 16 odd layers, a dense MLP of 14336 in the others; untied, vocab 65536.
    mlp = 3 * 4096 * 14336
    mamba = mamba_mixer(4096, 8192, 16, 256, 4, proj_bias=False, conv_bias=True)
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024
    total = (
        28 * mamba + 4 * attention + 16 * mlp + 16 * (4096 * 16 + 16 * mlp) + 32 * 2 * 4096 + 2 * 65536 * 4096 + 4096
    )
    report = account(str(JAMBA))
    assert report.total_params == total == 51_570_323_328  # the card: 52B
    assert report.active_params == total - 16 * 14 * mlp == 12_110_311_296  # the card: 12B active


def test_only_jambas_attention_layers_grow_with_context():
    report = flops(str(JAMBA), 10_000).per_token
    assert report.attention_scores == 4 * 2 * 32 * (128 + 128) * 10_000
    assert report.mixer_state == 28 * (6 * 8192 * 16 + 2 * 8192 * 4)


def test_an_offset_not_below_its_period_is_refused_as_transformers_refuses(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "attn_layer_offset": 4}
    with pytest.raises(InvalidConfigError, match="attn_layer_offset"):
        account(str(write_config(config)))
