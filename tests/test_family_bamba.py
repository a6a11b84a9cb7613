"""IBM's Mamba-2 hybrids: Bamba (attention at attn_layer_indices, Mamba-2 elsewhere, a gated MLP everywhere) and
GraniteMoeHybrid (the same layers picked by layer_types, with Granite-MoE's experts beside a shared MLP).

Every expected figure is derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account, crossover, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
BAMBA = CONFIGS / "synthetic__bamba.json"
HYBRID = CONFIGS / "synthetic__granitemoehybrid.json"

# Both synthetic configs: hidden 64; Mamba-2 of 2 · 64 = 128 in 8 heads of 16, 2 groups of state 8, kernel 3 (conv
# unbiased, projections biased); attention of 4 heads of 24 over 2 KV heads with biases.
CONV_DIM = 128 + 2 * 2 * 8
IN_PROJ = 128 + CONV_DIM + 8
MAMBA = (64 * IN_PROJ + IN_PROJ) + CONV_DIM * 3 + 3 * 8 + 128 + (128 * 64 + 64)
ATTENTION = (64 * 96 + 96) + 2 * (64 * 48 + 48) + (96 * 64 + 64)
NORMS = 2 * 64


def kinds(report):
    return {i: g.attention_kind for g in report.layers for i in g.indices}


def test_bamba_attends_at_attn_layer_indices_and_has_an_mlp_everywhere():
    # 4 layers, attention at 1 and 3; MLP 96 with biases (mlp_bias); untied, vocabulary 1000
    mlp = 3 * 64 * 96 + 2 * 96 + 64
    report = account(str(BAMBA))
    assert kinds(report) == {0: "mamba2", 1: "gqa", 2: "mamba2", 3: "gqa"}
    assert report.total_params == 2 * MAMBA + 2 * ATTENTION + 4 * (mlp + NORMS) + 2 * 1000 * 64 + 64 == 296_960


def test_bamba_mamba_state_and_attention_scores_per_token():
    report = flops(str(BAMBA), 2000).per_token
    assert report.mixer_state == 2 * (5 * 8 * 16 * 8 + 2 * CONV_DIM * 3)
    assert report.attention_scores == 2 * 2 * 4 * (24 + 24) * 2000


def test_bamba_refuses_mamba_heads_that_do_not_divide_its_width_as_transformers_does(write_config):
    config = {**json.loads(BAMBA.read_text()), "mamba_n_heads": 6}
    with pytest.raises(InvalidConfigError, match="mamba_n_heads"):
        account(str(write_config(config)))


def test_granitemoehybrid_layers_experts_and_shared_mlp_by_hand():
    # layer_types mamba, attention, linear_attention, full_attention (the legacy names are transformers' too);
    # 4 experts of 48 (gate and up fused), 2 per token, routed by a 64 → 4 router, beside a shared MLP of 80; tied.
    expert, shared = 3 * 64 * 48, 3 * 64 * 80
    moe = 64 * 4 + 4 * expert + shared
    report = account(str(HYBRID))
    assert kinds(report) == {0: "mamba2", 1: "gqa", 2: "mamba2", 3: "gqa"}
    total = 2 * MAMBA + 2 * ATTENTION + 4 * (moe + NORMS) + 1000 * 64 + 64
    assert report.total_params == total == 368_128
    assert report.active_params == total - 4 * 2 * expert


def test_granitemoehybrid_without_experts_keeps_its_shared_mlp():
    # synthetic__granitemoehybrid_dense: num_local_experts 0, shared MLP 96; Mamba-2 of 128 in 4 heads of 32, 1 group
    # of state 16, kernel 4 (conv biased); attention 4 heads of 16 (KV heads: all) in layer 2; untied.
    conv_dim = 128 + 2 * 16
    mamba = 64 * (128 + conv_dim + 4) + conv_dim * 4 + conv_dim + 3 * 4 + 128 + 128 * 64
    report = account(str(CONFIGS / "synthetic__granitemoehybrid_dense.json"))
    assert report.moe is None
    assert report.total_params == 2 * mamba + 4 * 64 * 64 + 3 * (3 * 64 * 96 + NORMS) + 2 * 1000 * 64 + 64


def test_granitemoehybrid_by_default_is_all_mamba_and_never_crosses_over(write_config):
    config = {k: v for k, v in json.loads(HYBRID.read_text()).items() if k != "layer_types"}
    path = str(write_config(config))
    assert set(kinds(account(path)).values()) == {"mamba2"}
    assert crossover(path, "8k").crossover_context is None
