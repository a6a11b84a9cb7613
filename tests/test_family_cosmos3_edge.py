"""Cosmos3-Edge: a SigLIP-2-style tower, a 2 × 2 patch merger and a squared-ReLU language model (fc1, fc2), never tied.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__cosmos3_edge.json: 2,435,616,496; synthetic__cosmos3_edge.json: 172,584).
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__cosmos3_edge.json")


def test_the_default_cosmos3_edge_by_hand(write_config):
    # Cosmos3EdgeTextConfig: 28 layers of hidden 2048, 16 query heads and 8 KV heads of 128 (no biases), the plain
    # fc1/fc2 MLP of 9216, two RMSNorms a layer and a final one; a 131,072 × 2048 token table and its own head
    text_layer = (2048 * 16 * 128) + 2 * (2048 * 8 * 128) + (16 * 128 * 2048) + 2 * (2048 * 9216) + 2 * 2048
    text = 28 * text_layer + 2048 + 2 * 131072 * 2048
    # Cosmos3EdgeVisionConfig: a biased linear over 3 · 16² pixels into 1152, a 256-entry position grid, 27 SigLIP
    # layers (q, k, v, out 1152 → 1152 and fc1 1152 → 4304, fc2 4304 → 1152, all biased; two LayerNorms),
    # post_layernorm
    vision_layer = 4 * (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152) + 2 * 2 * 1152
    vision = (3 * 16 * 16 * 1152 + 1152) + 256 * 1152 + 27 * vision_layer + 2 * 1152
    # the patch merger: a LayerNorm over 1152, linear_fc1 4 · 1152 → 11520 and linear_fc2 11520 → 2048, biased
    projector = 2 * 1152 + (4 * 1152 * 11520 + 11520) + (11520 * 2048 + 2048)
    report = account(str(write_config({"model_type": "cosmos3_edge"})))
    assert (report.components.vision, report.components.projector) == (vision, projector)
    assert report.total_params == text + vision + projector == 2_435_616_496


def test_cosmos3_edge_keeps_its_own_head_although_its_config_says_tie_word_embeddings():
    # Cosmos3EdgeForConditionalGeneration._tied_weights_keys = {}: the synthetic config's true ties nothing
    assert account(SYNTHETIC).components.lm_head == 320 * 64


def test_a_cosmos3_edge_text_config_whose_mrope_sections_miss_half_the_head_is_refused(write_config):
    config = {"model_type": "cosmos3_edge_text", "head_dim": 64}  # the default sections [24, 20, 20] sum to 64, not 32
    with pytest.raises(InvalidConfigError, match="mrope_section"):
        account(str(write_config(config)))


def test_one_image_through_cosmos3_edges_tower_by_hand():
    # smart_resize to multiples of 4 · 2 = 8 (640 × 480 already is): 160 × 120 = 19,200 patches, 4,800 tokens
    image = flops(SYNTHETIC, image="640x480").image
    patches, tokens = 19200, 4800
    assert (image.resized_width, image.resized_height) == (640, 480)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 4 * 4 * 48) * patches  # the position grid is looked up
    assert image.attention_projections == 2 * 2 * (4 * 48 * 48) * patches
    assert image.attention_scores == 2 * 2 * 4 * (12 + 12) * patches * patches
    assert image.ffn == 2 * 2 * (2 * 48 * 80) * patches
    assert image.projector == 2 * (4 * 48 * 120 + 120 * 64) * tokens
