"""Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side, then a gated MLP.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__falcon_h1.json: hidden
64, 3 layers, MLP 160, 4 heads of 24 over 2 KV heads; a mixer of mamba_d_ssm 96 in 4 heads of 24, 2 groups, state 8,
kernel 3; every bias switch on but the conv's, the gated RMSNorm on; untied, vocabulary 1000).
"""

import json

import pytest

from ffncalc import account, crossover, flops
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
H1 = CONFIGS / "synthetic__falcon_h1.json"
CONV_DIM = 96 + 2 * 2 * 8  # x, B and C through the conv


def test_a_falcon_h1_layer_holds_attention_mamba_and_mlp():
    attention = (64 * 96 + 96) + 2 * (64 * 48 + 48) + (96 * 64 + 64)
    in_proj = 96 + CONV_DIM + 4  # z, x·B·C and dt
    mamba = (64 * in_proj + in_proj) + CONV_DIM * 3 + 3 * 4 + 96 + (96 * 64 + 64)  # out_proj's bias: projectors_bias
    mlp = 3 * 64 * 160 + 2 * 160 + 64
    layer = attention + mamba + mlp + 2 * 64
    report = account(str(H1))
    assert report.layers[0].attention_kind == "gqa+mamba2"
    assert report.layers[0].params == layer
    assert report.total_params == 3 * layer + 2 * 1000 * 64 + 64 == 342_384


def test_falcon_h1_pays_for_attention_scores_and_the_mamba_state_in_the_same_layer():
    report = flops(str(H1), 1000).per_token
    assert report.attention_scores == 3 * 2 * 4 * (24 + 24) * 1000
    assert report.mixer_state == 3 * (5 * 4 * 24 * 8 + 2 * CONV_DIM * 3)


def test_falcon_h1_caches_keys_and_values_and_keeps_the_mamba_state():
    # per layer: 2 KV heads × (24 + 24) per token, and the state 4 · 24 · 8 with the conv's last 2 inputs; bfloat16
    cache = memory(str(H1), 1000).kv_cache
    assert cache.bytes == 3 * (2 * 48 * 1000 + 4 * 24 * 8 + CONV_DIM * 2) * 2
    assert cache.bytes_per_token == 3 * 2 * 48 * 2


def test_falcon_h1_attention_overtakes_its_mlp_where_the_curves_meet():
    # MLP 2 · 3 · 64 · 160 per layer; scores 2 · 4 · 48 per key per layer: n* = 61,440 / 384 = 160
    assert crossover(str(H1), "8k").crossover_context == 160


def test_falcon_h1_without_mamba_d_ssm_is_expand_wide_and_may_drop_the_gated_norm():
    # synthetic__falcon_h1_expand: mamba_d_ssm null → 3 · 64 = 192 in 6 heads of 32, 1 group of state 16, kernel 4
    # (conv biased, projections not), no gated RMSNorm (mamba_rms_norm false); 8 heads of 8 (kv heads: all);
    # MLP 96; tied.
    conv_dim = 192 + 2 * 16
    mamba = 64 * (192 + conv_dim + 6) + conv_dim * 4 + conv_dim + 3 * 6 + 192 * 64
    layer = 4 * 64 * 64 + mamba + 3 * 64 * 96 + 2 * 64
    report = account(str(CONFIGS / "synthetic__falcon_h1_expand.json"))
    assert report.layers[0].params == layer
    assert report.total_params == 2 * layer + 1000 * 64 + 64


def test_falcon_h1_refuses_mamba_heads_that_do_not_tile_the_mixer_as_transformers_does(write_config):
    config = {**json.loads(H1.read_text()), "mamba_d_head": 20}
    with pytest.raises(InvalidConfigError, match="mamba_d_head"):
        account(str(write_config(config)))
