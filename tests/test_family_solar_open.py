"""Upstage's Solar Open: Llama's attention and GLM-4.5's experts in every layer.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__solar_open.json, synthetic__solar_open.json).
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_solar_open_default_model_by_hand(write_config):
    # SolarOpenConfig(): H 4,096, 48 layers of 64 query and 8 KV heads of 128 (q and o H × 8,192, k and v H × 1,024),
    # every layer a MoE: router 128 × H, 128 experts and one shared MLP of 3 · H · 1,280; two RMSNorms a layer;
    # vocabulary 196,608, untied.
    hidden = 4096
    layer = 2 * hidden * 8192 + 2 * hidden * 1024 + 128 * hidden + 129 * 3 * hidden * 1280 + 2 * hidden
    report = account(str(write_config({"model_type": "solar_open"})))
    assert report.total_params == 48 * layer + 2 * 196608 * hidden + hidden == 102_651_793_408


def test_solar_open_active_parameters_use_two_of_six_experts_and_the_shared_mlp():
    # 6 experts of 3 · 64 · 16 in each of 2 layers; a token uses 2 (and the shared MLP, 2 × 16 wide, always).
    report = account(str(CONFIGS / "synthetic__solar_open.json"))
    expert = 3 * 64 * 16
    assert report.moe.routed_expert_params == 2 * 6 * expert
    assert report.total_params - report.active_params == 2 * 4 * expert
    (bias,) = report.checkpoint_extras
    assert bias.name == "router e_score_correction_bias" and bias.elements == 2 * 6
