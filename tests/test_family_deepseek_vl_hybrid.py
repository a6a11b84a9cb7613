"""DeepSeek-VL hybrid: DeepSeek-VL's SigLIP tower and language model beside SAM's ViT at high resolution, a second
neck, two strided convolutions and a scalar gate over its output, and an aligner that joins both towers' features.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__deepseek_vl_hybrid.json: 400,405; defaults__deepseek_vl_hybrid.json:
6,817,039,873).
"""

import json

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import InvalidConfigError, UsageError

from .agreement import stored_tensors
from .conftest import ROOT

HYBRID = ROOT / "tests" / "configs" / "synthetic__deepseek_vl_hybrid.json"

# SigLIP without its head: 48 wide, FFN 80, patches of 14 px at 56 px (16 patches)
SIGLIP = (48 * 3 * 14 * 14 + 48) + 16 * 48 + 2 * (4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 4 * 48) + 96
# SAM: 40 wide, 4 heads of 10, FFN int(40 · mlp_ratio 2.0) = 80, an 8 × 8 grid, windows of 3, layer 1 global
SAM_LAYER = (40 * 120 + 120) + (40 * 40 + 40) + (40 * 80 + 80) + (80 * 40 + 40) + 4 * 40
SAM_NECK = 24 * 40 + 2 * 24 + 24 * 24 * 9 + 2 * 24  # 1 × 1 into output_channels 24, LayerNorm, 3 × 3, LayerNorm


def test_the_high_resolution_tower_is_sams_vit_with_its_mlp_width_from_mlp_ratio():
    windowed, whole = SAM_LAYER + 2 * 5 * 10, SAM_LAYER + 2 * 15 * 10  # rel_pos_h/w: 2·3 − 1 and 2·8 − 1 rows
    sam = (40 * 3 * 16 * 16 + 40) + 8 * 8 * 40 + 2 * windowed + whole + SAM_NECK
    # the second neck, high_res_vision_proj (24 → 48 → 96, 3 × 3, no bias) and high_res_vision_alpha
    after = SAM_NECK + 48 * 24 * 9 + 96 * 48 * 9 + 1
    assert account(str(HYBRID)).components.vision == SIGLIP + sam + after


def test_the_aligner_maps_each_tower_to_half_the_text_width_then_joins_them():
    # vision_proj 48 → 32, high_res_vision_proj 4 · 24 → 32, proj 64 → 64, all biased
    assert account(str(HYBRID)).components.projector == (48 * 32 + 32) + (96 * 32 + 32) + (64 * 64 + 64)


def test_sams_layers_are_stored_from_zero_after_siglips():
    names = stored_tensors(load_config(str(HYBRID)).spec)
    sam = "model.high_res_vision_model.vision_encoder.layers.{}.attn.rel_pos_h"
    assert [names.get(sam.format(i)) for i in range(4)] == [(5, 10), (15, 10), (5, 10), None]
    assert "model.vision_model.encoder.layers.1.self_attn.q_proj.weight" in names


def test_image_flops_are_refused_by_name():
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(str(HYBRID), image="640x480")


def test_no_global_layer_is_refused_by_name(write_config):
    raw = json.loads(HYBRID.read_text())
    raw["high_res_vision_config"]["global_attn_indexes"] = []
    with pytest.raises(InvalidConfigError, match=r"high_res_vision_config\.global_attn_indexes"):
        account(str(write_config(raw)))
