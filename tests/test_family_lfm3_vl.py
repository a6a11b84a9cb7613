"""LFM3-VL: an LFM3 language model around a tower of gated 2-D convolutions and grouped-query attention.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__lfm3_vl.json, defaults__lfm3_vl.json).
"""

import json

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

LFM3_VL_PATH = ROOT / "tests" / "configs" / "synthetic__lfm3_vl.json"
LFM3_VL = str(LFM3_VL_PATH)

# The tower of the synthetic config: hidden 48, 4 heads of 12 (2 KV heads), a SwiGLU of 80, 5 × 5 convolutions.
CONV_LAYER = (48 * 3 * 48) + 48 * 25 + 48 * 48  # in_proj 48 → 144, the depthwise 5 × 5 weight, out_proj
ATTENTION_LAYER = 48 * 48 + 2 * 48 * 24 + 48 * 48 + 2 * 12  # q, k and v of 2 heads, out_proj, q/k norms of 12
MLP_AND_NORMS = 3 * 48 * 80 + 2 * 48


def test_lfm3_vl_counts_its_convolution_and_attention_layers_by_hand():
    report = account(LFM3_VL)
    # layer_types by default: "conv" where i < 2 or i is odd, attention elsewhere: conv, conv, attention, conv
    patchifier = 3 * 2 * 14 * 14 * 48  # in_channels · temporal_patch_size · 14² → 48, no bias
    layers = 3 * (CONV_LAYER + MLP_AND_NORMS) + (ATTENTION_LAYER + MLP_AND_NORMS)
    assert report.components.vision == patchifier + 48 + layers  # + embedding_norm
    # the projector: LayerNorm (48, biased), 2 × 2 patches side by side (192) → 96 → 64, biased
    assert report.components.projector == 2 * 48 + (192 * 96 + 96) + (96 * 64 + 64)


def test_lfm3_vl_is_untied_by_its_own_flag():
    # the top-level tie_word_embeddings false: the head is its own 320 × 64 matrix
    assert account(LFM3_VL).components.lm_head == 320 * 64


def test_one_image_through_lfm3_vls_tower_by_hand():
    # smart_resize to multiples of 14 · 2 = 28: 1024 → 37 · 28 = 1036, 768 → 27 · 28 = 756; 54 × 74 = 3,996 patches,
    # 27 × 37 = 999 tokens after the projector's 2 × 2 merge
    image = flops(LFM3_VL, image="1024x768").image
    patches, tokens = 3996, 999
    assert (image.resized_width, image.resized_height) == (1036, 756)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * 48) * patches
    # the three convolution layers: in_proj, the depthwise 5 × 5 (25 multiply-adds a channel), out_proj
    assert image.mixers == 3 * 2 * (48 * 144 + 48 * 25 + 48 * 48) * patches
    # the one attention layer, over every patch of the frame: scores of 4 heads of 12 for keys and values
    assert image.attention_projections == 2 * (48 * 48 + 2 * 48 * 24 + 48 * 48) * patches
    assert image.attention_scores == 2 * 4 * (12 + 12) * patches * patches
    assert image.ffn == 4 * 2 * (3 * 48 * 80) * patches
    assert image.projector == 2 * (192 * 96 + 96 * 64) * tokens
    assert image.total == (
        image.patch_embedding + image.attention_projections + image.attention_scores + image.ffn + image.mixers
        + image.projector
    )  # fmt: skip


def test_lfm3_vl_layer_types_choose_each_tower_layers_operator(write_config):
    config = json.loads(LFM3_VL_PATH.read_text())
    config["vision_config"]["layer_types"] = ["full_attention"] * 4
    report = account(str(write_config(config)))
    assert report.components.vision == 3 * 2 * 14 * 14 * 48 + 48 + 4 * (ATTENTION_LAYER + MLP_AND_NORMS)


def test_lfm3_vl_refuses_layer_types_of_another_length(write_config):
    # PreTrainedConfig.validate_layer_type: one entry a layer
    config = json.loads(LFM3_VL_PATH.read_text())
    config["vision_config"]["layer_types"] = ["conv", "full_attention"]
    with pytest.raises(InvalidConfigError, match="vision_config: layer_types has 2 entries for 4 layers"):
        account(str(write_config(config)))
