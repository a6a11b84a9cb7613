"""Inkling (inkling_mm_model): the Inkling text model with a hierarchical-MLP image encoder and a dMel audio
embedding, saved under Thinking Machines' own names; never tied.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__inkling_mm_model.json: 1,740,191,689,202; synthetic__inkling_mm_model.json:
11,268,915).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__inkling_mm_model.json")


def test_the_default_inkling_image_encoder_by_hand(write_config):
    # patch 40 = 5 · 2 · 2 · 2, temporal 2: scales (t, h, w, channels) (1,1,1,3), (1,5,5,128), (1,10,10,320),
    # (1,20,20,1216), (1,40,40,4800), (2,40,40,614400) (channels h² · 3 rounded up to 64; the last 40² · 3 · 2 · 64).
    # The even climb to log(40² · 2 · 3) over 24 layers picks them 5, 6, 3, 4, 3 and 4 times; each layer folds from its
    # scale to the next and projects without bias (an RMSNorm after all but the last, which projects into 6144)
    layers = (
        4 * (3 * 3 + 3) + (75 * 128 + 128) + 5 * (128 * 128 + 128) + (512 * 320 + 320) + 2 * (320 * 320 + 320)
        + (1280 * 1216 + 1216) + 3 * (1216 * 1216 + 1216) + (4864 * 4800 + 4800) + 2 * (4800 * 4800 + 4800)
        + (9600 * 614400 + 614400) + 2 * (614400 * 614400 + 614400) + 614400 * 6144
    )  # fmt: skip
    vision = layers + 6144  # final_norm
    audio = 80 * 256 * 6144 + 6144  # the dMel table (80 bins × 256 levels) and final_norm
    report = account(str(write_config({"model_type": "inkling_mm_model"})))
    assert (report.components.vision, report.components.audio) == (vision, audio)
    # the text model is inkling_text's default, 975,340,270,146 (tests/test_family_inkling.py derives it)
    assert report.total_params == 975_340_270_146 + vision + audio == 1_740_191_689_202


def test_a_small_inkling_image_encoder_by_hand():
    # patch 8 = 2 · 2 · 2, temporal 2: scales (1,1,1,3), (1,2,2,64), (1,4,4,64), (1,8,8,192), (2,8,8,24576); over 7
    # layers the climb picks 1, 2, 2, 1 and 2 of them: folds of 4, 1, 4, 1, 4, 2, 1; the last projects into 64
    linears = 12 * 64 + 64 * 64 + 256 * 64 + 64 * 64 + 256 * 192 + 384 * 24576 + 24576 * 64
    norms = 4 * 64 + 192 + 24576
    assert account(SYNTHETIC).components.vision == linears + norms + 64 == 11_109_632


def test_inklings_audio_embedding_is_one_table_in_the_text_width():
    # 4 mel bins × 8 levels, 64 wide (the text model's hidden_size, as InklingConfig.__post_init__ sets), a norm
    assert account(SYNTHETIC).components.audio == 4 * 8 * 64 + 64


def test_inkling_never_ties_its_head_and_counts_its_text_model_whole():
    report = account(SYNTHETIC)
    assert report.components.lm_head == 320 * 64
    assert report.total_params == report.components.language_model + 11_109_632 + 2112 == 11_268_915


def test_an_inkling_image_encoder_with_fewer_layers_than_scales_is_refused(write_config):
    # 40-pixel patches over 2 frames make 6 scales; with 5 layers transformers calls scipy's linear_sum_assignment
    config = {"model_type": "inkling_mm_model", "vision_config": {"num_hidden_layers": 5}}
    with pytest.raises(InvalidConfigError, match="linear_sum_assignment"):
        account(str(write_config(config)))


def test_an_inkling_plan_that_float_rounding_decides_is_refused(write_config):
    # patch 32, 4 frames, 1 channel over 12 layers: layer 1's ideal size lies exactly midway between two scales
    config = {
        "model_type": "inkling_mm_model",
        "vision_config": {"patch_size": 32, "temporal_patch_size": 4, "num_channels": 1, "num_hidden_layers": 12},
    }
    with pytest.raises(InvalidConfigError, match="midway"):
        account(str(write_config(config)))
