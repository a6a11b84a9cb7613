"""MiniCPM-V 4.6 and 4.7: a Qwen3.5 language model around a SigLIP tower with a window-attention merger inside it,
and a merger of 2 × 2 features into the text width.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__minicpmv4_6.json: 307,320; synthetic__minicpmv4_7.json: 265,944;
defaults__minicpmv4_6.json and defaults__minicpmv4_7.json: 9,111,202,816 each).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

V46 = str(ROOT / "tests" / "configs" / "synthetic__minicpmv4_6.json")
V47 = str(ROOT / "tests" / "configs" / "synthetic__minicpmv4_7.json")

# The tower of both: a biased 14 × 14 patch convolution of 3 channels into 32, (56 / 14)² = 16 positions, 3 SigLIP
# layers (q, k, v, out 32 → 32 and fc1 32 → 48, fc2 48 → 32, all biased; two LayerNorms), post_layernorm; vit_merger:
# q, k, v, out_proj 32 → 32 biased, layer_norm1 (32), pre_norm (4 · 32 = 128), linear_1 128 → 4 · 48 = 192 and
# linear_2 192 → 32, biased
LAYER = 4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32
VIT_MERGER = 4 * (32 * 32 + 32) + 2 * 32 + 2 * 128 + (128 * 192 + 192) + (192 * 32 + 32)
TOWER = (3 * 14 * 14 * 32 + 32) + 16 * 32 + 3 * LAYER + 2 * 32 + VIT_MERGER


def merger_mlp(out: int) -> int:
    """pre_norm (4 · 32 = 128, biased), linear_1 128 → 128 and linear_2 128 → OUT, biased."""
    return 2 * 128 + (128 * 128 + 128) + (128 * out + out)


def test_minicpmv4_6s_tower_with_its_window_attention_merger_by_hand():
    assert account(V46).components.vision == TOWER == 77424


def test_minicpmv4_6s_merger_runs_merger_times_mlps_the_last_into_the_text_width_by_hand():
    # merger_times 2: mlp.0 back to the tower's width (32), mlp.1 into the text width (64)
    assert account(V46).components.projector == merger_mlp(32) + merger_mlp(64)


def test_minicpmv4_7_with_one_merger_mlp_and_a_tied_head_by_hand():
    report = account(V47)
    assert report.components.projector == merger_mlp(64)
    assert report.components.lm_head == 0
    assert report.components.vision == TOWER


def test_minicpmvs_language_model_is_qwen3_5s_text_model_untied_by_hand():
    # Qwen3.5 (hidden 64, MLP 96 in every layer): one full-attention layer (q and its gate 64 → 2 · 4 · 16, k and v
    # 64 → 32, o 64 → 64, q_norm and k_norm 16) and three Gated DeltaNet layers (in_proj_qkv 64 → 2 · 32 + 64,
    # in_proj_z 64 → 64, in_proj_b and in_proj_a 64 → 4, a depthwise conv of 4 over 128 channels, dt_bias and A_log
    # 4, a norm of 16, out_proj 64 → 64); two norms a layer, a final one; 320 × 64 table and head
    mlp = 3 * 64 * 96
    full = 64 * 128 + 2 * 64 * 32 + 64 * 64 + 2 * 16 + mlp + 2 * 64
    deltanet = 64 * 128 + 64 * 64 + 2 * 64 * 4 + 128 * 4 + 2 * 4 + 16 + 64 * 64 + mlp + 2 * 64
    report = account(V46)
    assert report.language_model_params == full + 3 * deltanet + 64 + 2 * 320 * 64
    assert report.total_params == report.language_model_params + TOWER + merger_mlp(32) + merger_mlp(64) == 307320


def test_an_image_through_minicpmv_is_refused_as_ffncalc_has_no_rule_for_it():
    with pytest.raises(UsageError, match="`image` needs"):
        flops(V46, image="448x448")


def test_minicpm_ocr_is_minicpmv4_6s_model_tied_by_default(write_config):
    # synthetic__minicpm_ocr.json is synthetic__minicpmv4_6.json without tie_word_embeddings (MiniCPMOcrConfig's
    # default: true) nor merger_times (1): no head of its own, one merger MLP
    report = account(str(ROOT / "tests" / "configs" / "synthetic__minicpm_ocr.json"))
    assert report.components.lm_head == 0
    assert report.components.projector == merger_mlp(64)
    assert report.total_params == 265944  # transformers 5.24 (tests/expected/transformers/synthetic__minicpm_ocr.json)
    # its default config: Qwen3.5's text model, tied (transformers 5.24 counts 8,094,084,096)
    assert account(str(write_config({"model_type": "minicpm_ocr"}))).total_params == 8094084096
