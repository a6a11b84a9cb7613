"""HunYuan-VL and Hy4-VL: HunYuan-VL's vision tower (LayerNorm layers, a merger of 2 × 2 patches by convolution) around
HunYuan-Dense's language model, or, with a merger straight into the text width, around Hy4's.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__hunyuan_vl.json: 149,248; synthetic__hunyuan_vl_flat.json: 149,632;
synthetic__hy_v4_vl.json: 652,244; defaults__hy_v4_vl.json: 771,142,515,869; defaults__hunyuan_vl.json: refused).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

HUNYUAN_VL = str(ROOT / "tests" / "configs" / "synthetic__hunyuan_vl.json")
FLAT = str(ROOT / "tests" / "configs" / "synthetic__hunyuan_vl_flat.json")
HY_V4_VL = str(ROOT / "tests" / "configs" / "synthetic__hy_v4_vl.json")

# Both towers: a biased 16 × 16 patch convolution 3 → 32, (128 / 16)² + 1 = 65 positions, 2 layers (q, k, v, o 32 → 32
# and dense_h_to_4h 32 → 48, dense_4h_to_h 48 → 32, all biased; two LayerNorms with biases), the merger's RMSNorm (32)
TOWER = (3 * 16 * 16 * 32 + 32) + 65 * 32 + 2 * (4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32) + 32


def test_hunyuan_vls_merger_ends_in_the_text_width_by_hand():
    # proj.0 2 × 2 convolution 32 → 64, proj.2 1 × 1 64 → 128, mlp 128 → 64 (text_hidden_size set to the language
    # model's hidden_size), all biased; after_rms (64), image_newline (128), image_begin, image_end, image_sep (64)
    merger = (32 * 64 * 4 + 64) + (64 * 128 + 128) + (128 * 64 + 64) + 64 + 128 + 3 * 64
    assert account(HUNYUAN_VL).components.vision == TOWER + merger == 66944


def test_hunyuan_vl_is_tied_by_its_language_models_default_whatever_its_own_flag_says():
    # tie_word_embeddings false at the top, text_config's left at its default (true): HunYuanVLConfig ties
    assert account(HUNYUAN_VL).components.lm_head == 0


def test_a_flat_hunyuan_vl_config_reads_its_language_model_from_the_top_level_keys_by_hand():
    # attention_bias true at the top level: q, k, v, o biased (64 + 32 + 32 + 64 per layer)
    report = account(FLAT)
    assert report.components.attention == account(HUNYUAN_VL).components.attention + 2 * (64 + 32 + 32 + 64)


def test_hunyuan_vls_default_config_is_refused_as_transformers_cannot_build_it(write_config):
    with pytest.raises(InvalidConfigError, match="head_dim"):
        account(str(write_config({"model_type": "hunyuan_vl"})))


def test_hy_v4_vls_merger_projects_straight_into_the_text_width_by_hand():
    # proj.0 2 × 2 convolution 32 → 128, proj.2 1 × 1 128 → 96 (out_hidden_size), biased; image_newline (96)
    merger = (32 * 128 * 4 + 128) + (128 * 96 + 96) + 96
    assert account(HY_V4_VL).components.vision == TOWER + merger == 70720


def test_hy_v4_vls_language_model_is_hy4s_by_transformers_count():
    # the synthetic's text_config is tests/configs/synthetic__hy_v4.json's (transformers 5.24 counts 581,524 for that
    # causal LM: tests/expected/transformers/synthetic__hy_v4.json), with the tower beside it
    assert account(HY_V4_VL).total_params == 581524 + 70720


def test_hy_v4_vls_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "hy_v4_vl"}))).total_params == 771142515869


def test_one_image_through_hy_v4_vls_tower_by_hand():
    # 640 × 480 is a multiple of 16 · 2: 40 × 30 = 1,200 patches, 300 merged tokens
    image = flops(HY_V4_VL, image="640x480").image
    assert (image.patches, image.image_tokens) == (1200, 300)
    assert image.patch_embedding == 2 * (3 * 16 * 16 * 32) * 1200
    assert image.attention_scores == 2 * 2 * 4 * (8 + 8) * 1200 * 1200
    assert image.projector == 2 * (32 * 128 * 4 + 128 * 96) * 300
