"""LFM2-VL: a SigLIP 2 tower, a pixel-unshuffle projector and an LFM2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__lfm2_vl.json, defaults__lfm2_vl.json).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

LFM2_VL = str(ROOT / "tests" / "configs" / "synthetic__lfm2_vl.json")


def test_lfm2_vl_counts_its_siglip2_tower_and_projector_by_hand():
    report = account(LFM2_VL)
    # LFM2: layers 0 and 2 short convolutions (in_proj 64 → 192, a depthwise kernel of 3, out_proj 64 → 64, no
    # biases), layers 1 and 3 attention (q and out 64 → 64, k and v 64 → 32, q/k norms of 16); a gated MLP of 96 in
    # each, two norms a layer, embedding_norm; vocabulary 1,000, untied by the top-level tie_embedding
    conv = 64 * 192 + 64 * 3 + 64 * 64
    attention = 2 * 64 * 64 + 2 * 64 * 32 + 2 * 16
    assert report.language_model_params == 2 * conv + 2 * attention + 4 * (3 * 64 * 96 + 2 * 64) + 64 + 2 * 1000 * 64
    # SigLIP 2: a biased linear from 16 × 16 × 3 = 768 values into 48, 64 positions, 2 layers (q, k, v, out_proj with
    # biases; fc1 48 → 80, fc2; two LayerNorms with biases), post_layernorm; no pooling head
    layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == (768 * 48 + 48) + 64 * 48 + 2 * layer + 2 * 48
    # the projector: 2 × 2 patches side by side (192) into 80, then 64, biased; no LayerNorm
    assert report.components.projector == (192 * 80 + 80) + (80 * 64 + 64)


def test_one_tile_through_lfm2_vls_tower_by_hand():
    # Lfm2VlImageProcessor cuts a 1024 × 768 image (too large for 256 tokens) into 512-px tiles and a thumbnail;
    # one tile is (512 / 16)² = 1,024 patches (max_num_patches, the length every image is padded to), unshuffled
    # 2 × 2 into 256 tokens
    image = flops(LFM2_VL, image="1024x768").image
    patches, tokens, layers, width, inner, heads, head_dim = 1024, 256, 2, 48, 80, 4, 12
    assert image.per_tile and (image.resized_width, image.patches, image.image_tokens) == (512, patches, tokens)
    assert image.patch_embedding == 2 * (768 * width) * patches
    assert image.attention_projections == layers * 2 * (4 * width * width) * patches
    assert image.ffn == layers * 2 * (2 * width * inner) * patches
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (192 * 80 + 80 * 64) * tokens


def test_lfm2_vl_at_another_downsample_factor_has_no_image_rule(write_config):
    # at downsample_factor 3 the processor pads each image or tile to max(256 · 9, 32²) = 2,304 patches, not a
    # tile's 1,024: ffncalc states no image's FLOPs rather than a wrong figure
    config = write_config({"model_type": "lfm2_vl", "downsample_factor": 3})
    with pytest.raises(UsageError, match="whose image rule ffncalc knows"):
        flops(str(config), image="800x600")
