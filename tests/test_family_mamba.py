"""Mamba, Falcon-Mamba and Mamba-2: one RMSNorm and one state-space mixer a layer, nothing that grows with the context.

Every expected figure is derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account, compare, crossover, flops
from ffncalc.api import memory, verify
from ffncalc.errors import InvalidConfigError

from .checkpoints import write_checkpoint
from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"
MAMBA_130M = BUNDLED / "state-spaces__mamba-130m-hf.json"  # hidden 768, 24 layers, inner 1536, state 16, dt_rank 48
FALCON_MAMBA_7B = BUNDLED / "tiiuae__falcon-mamba-7b.json"


def mamba_layer(hidden, inner, state, dt_rank, kernel, proj_bias=False, conv_bias=True):
    """in_proj H → 2·inner, conv over inner, x_proj inner → dt_rank + 2·state, dt_proj dt_rank → inner (+ bias),
    A_log inner × state, D inner, out_proj inner → H, and the layer's RMSNorm."""
    in_proj = hidden * 2 * inner + (2 * inner if proj_bias else 0)
    conv = inner * kernel + (inner if conv_bias else 0)
    x_proj = inner * (dt_rank + 2 * state)
    dt_proj = dt_rank * inner + inner
    out_proj = inner * hidden + (hidden if proj_bias else 0)
    return in_proj + conv + x_proj + dt_proj + inner * state + inner + out_proj + hidden


def test_mamba_130m_by_hand():
    layer = mamba_layer(768, 1536, 16, 48, 4)
    report = account(str(MAMBA_130M))
    assert report.layers[0].params == layer
    # tied embeddings: the table once, and the final RMSNorm
    assert report.total_params == 24 * layer + 50280 * 768 + 768 == 129_135_360


def test_time_step_rank_auto_is_hidden_over_16_rounded_up():
    # synthetic__mamba: hidden 40 → dt_rank ceil(40 / 16) = 3; inner 3 · 40; state 6; kernel 5; biased projections,
    # unbiased conv; untied.
    layer = mamba_layer(40, 120, 6, 3, 5, proj_bias=True, conv_bias=False)
    report = account(str(CONFIGS / "synthetic__mamba.json"))
    assert report.layers[0].params == layer
    assert report.total_params == 3 * layer + 2 * 1000 * 40 + 40


def test_falcon_mamba_intermediate_size_key_wins_over_expand():
    # falcon-mamba-7b says expand 16 but intermediate_size 8192 (2 · 4096): transformers keeps the key.
    layer = mamba_layer(4096, 8192, 16, 256, 4)  # its dt, B and C RMSNorms hold no weights
    report = account(str(FALCON_MAMBA_7B))
    assert report.layers[0].params == layer
    assert report.total_params == 64 * layer + 2 * 65024 * 4096 + 4096 == 7_272_665_088


def test_falcon_mamba_without_intermediate_size_is_expand_times_hidden():
    # synthetic__falcon_mamba: expand 3 × hidden 64 = 192, dt_rank ceil(64 / 16) = 4
    layer = mamba_layer(64, 192, 8, 4, 4, proj_bias=True)
    assert account(str(CONFIGS / "synthetic__falcon_mamba.json")).layers[0].params == layer


def test_mamba_state_update_is_six_flops_per_state_element_plus_the_conv():
    # Per layer: state inner × state = 1536 · 16; Δ·A, the decay, the input (·B, +) and the readout (2):
    # 6 FLOPs each; the depthwise conv 2 · 1536 · 4.
    per_layer = 6 * 1536 * 16 + 2 * 1536 * 4
    report = flops(str(MAMBA_130M), 4096).per_token
    assert report.mixer_state == 24 * per_layer
    # projections: in_proj, x_proj, dt_proj, out_proj, 2 FLOPs per weight
    assert report.mixer == 24 * 2 * (768 * 3072 + 1536 * 80 + 48 * 1536 + 1536 * 768)
    assert report.lm_head == 2 * 50280 * 768  # tied, still multiplied


def test_a_pure_state_space_model_costs_the_same_at_any_context():
    assert flops(str(MAMBA_130M), 1024).per_token.total == flops(str(MAMBA_130M), 131072).per_token.total
    report = crossover(str(MAMBA_130M), "128k")
    assert report.crossover_context is None
    assert "no layer attends" in report.never_reason


def test_mamba_keeps_a_fixed_state_whatever_the_context():
    # per layer: the SSM state 1536 · 16 and the conv's last 3 inputs of 1536 channels; float32 as stored
    state = 1536 * 16 + 1536 * 3
    short, long = memory(str(MAMBA_130M), 1024), memory(str(MAMBA_130M), 131072)
    assert short.kv_cache.bytes == long.kv_cache.bytes == 24 * state * 4
    assert long.kv_cache.bytes_per_token == 0


def test_mamba2_layer_and_state_by_hand():
    # synthetic__mamba2: hidden 48, 4 heads of 24 (inner 96 = 2 · 48), 2 groups, state 8, kernel 3; biased
    # projections, unbiased conv; tied.
    conv_dim = 96 + 2 * 2 * 8
    layer = (48 * (96 + conv_dim + 4) + (96 + conv_dim + 4)) + conv_dim * 3 + 3 * 4 + 96 + (96 * 48 + 48) + 48
    report = account(str(CONFIGS / "synthetic__mamba2.json"))
    assert report.layers[0].params == layer
    assert report.total_params == 3 * layer + 1000 * 48 + 48
    # 5 FLOPs per element of the 4 · 24 · 8 state, and the conv 2 · 128 · 3, in each of the 3 layers
    assert flops(str(CONFIGS / "synthetic__mamba2.json"), 8192).per_token.mixer_state == 3 * (
        5 * 4 * 24 * 8 + 2 * conv_dim * 3
    )


def test_mamba2_heads_must_tile_expand_times_hidden_as_transformers_requires(write_config):
    config = {**json.loads((CONFIGS / "synthetic__mamba2.json").read_text()), "head_dim": 20}
    with pytest.raises(InvalidConfigError, match="num_heads × head_dim"):
        account(str(write_config(config)))


def test_compare_lists_a_model_without_ffn_with_width_zero():
    (row,) = compare([str(MAMBA_130M)])
    assert (row.ffn_width, row.ffn_kind, row.ffn_params_per_layer, row.total_params) == (0, "none", 0, 129_135_360)


def test_a_checkpoint_with_transformers_names_verifies(tmp_path):
    # The names and shapes MambaForCausalLM saves, written by hand: backbone.embeddings, per layer the mixer's
    # tensors and its norm, backbone.norm_f; the head is tied and not stored.
    config = json.loads((CONFIGS / "synthetic__mamba.json").read_text()) | {"tie_word_embeddings": True}
    hidden, inner, state, rank, kernel = 40, 120, 6, 3, 5
    tensors = {"backbone.embeddings.weight": ("F32", [1000, hidden]), "backbone.norm_f.weight": ("F32", [hidden])}
    for i in range(3):
        mixer = f"backbone.layers.{i}.mixer."
        tensors |= {
            mixer + "A_log": ("F32", [inner, state]),
            mixer + "D": ("F32", [inner]),
            mixer + "conv1d.weight": ("F32", [inner, 1, kernel]),
            mixer + "in_proj.weight": ("F32", [2 * inner, hidden]),
            mixer + "in_proj.bias": ("F32", [2 * inner]),
            mixer + "x_proj.weight": ("F32", [rank + 2 * state, inner]),
            mixer + "dt_proj.weight": ("F32", [inner, rank]),
            mixer + "dt_proj.bias": ("F32", [inner]),
            mixer + "out_proj.weight": ("F32", [hidden, inner]),
            mixer + "out_proj.bias": ("F32", [hidden]),
            f"backbone.layers.{i}.norm.weight": ("F32", [hidden]),
        }
    report = verify(str(write_checkpoint(tmp_path / "mamba", config, tensors)))
    assert report.ok
    assert (
        report.checkpoint_params
        == report.ffncalc_params
        == 3 * mamba_layer(40, 120, 6, 3, 5, True, False) + 1000 * 40 + 40
    )
