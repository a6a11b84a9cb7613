"""Gemma 4 unified: Gemma 4's wrapper without towers; an image's merged patches and an audio clip's raw frames are
projected straight into the language model (gemma4_unified_text).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__gemma4_unified.json: 200,816; defaults__gemma4_unified.json: 3,010,758,400).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__gemma4_unified.json")

# The vision embedder: model patches of 4 · 2 = 8 pixels, 3 · 8² = 192 values; patch_ln1 (192, biased), patch_dense
# 192 → 48 with bias, patch_ln2 (48, biased), pos_embedding [40, 2, 48], pos_norm (48, biased)
VISION_EMBEDDER = 2 * 192 + (192 * 48 + 48) + 2 * 48 + 40 * 2 * 48 + 2 * 48
# embed_vision.embedding_projection 48 → 64 and embed_audio.embedding_projection 40 → 64, no biases
PROJECTIONS = 48 * 64 + 40 * 64


def test_gemma4_unifieds_embedders_count_as_its_projector_by_hand():
    report = account(CONFIG)
    assert report.components.projector == VISION_EMBEDDER + PROJECTIONS == 19312
    assert report.components.vision == 0


def test_gemma4_unifieds_language_model_by_hand():
    # 4 layers of hidden 64, 4 query heads and 2 KV heads: sliding layers of head_dim 16, full layers of
    # global_head_dim 32; a GeGLU of 96; four RMSNorms a layer, q_norm and k_norm per head; a tied 512 × 64 table
    sliding = (64 * 64 + 2 * 64 * 32 + 64 * 64) + 3 * 64 * 96 + 4 * 64 + 2 * 16
    full = (64 * 128 + 2 * 64 * 64 + 128 * 64) + 3 * 64 * 96 + 4 * 64 + 2 * 32
    assert account(CONFIG).language_model_params == 2 * sliding + 2 * full + 64 + 512 * 64


def test_gemma4_unifieds_default_config_is_its_language_model_alone(write_config):
    # Gemma4UnifiedConfig's vision and audio blocks are optional, absent by default: Gemma4UnifiedTextConfig's
    # defaults (30 layers, hidden 2304, 8 heads, 4 KV heads; every sixth layer full with head_dim 512, else 256;
    # a GeGLU of 9216; a tied 262,144-row table)
    sliding = (2304 * 2048 + 2 * 2304 * 1024 + 2048 * 2304) + 3 * 2304 * 9216 + 4 * 2304 + 2 * 256
    full = (2304 * 4096 + 2 * 2304 * 2048 + 4096 * 2304) + 3 * 2304 * 9216 + 4 * 2304 + 2 * 512
    report = account(str(write_config({"model_type": "gemma4_unified"})))
    assert report.total_params == 25 * sliding + 5 * full + 2304 + 262144 * 2304 == 3010758400
    assert report.components.projector == 0


def test_one_image_through_gemma4_unifieds_embedder_by_hand():
    # every image padded to 280 merged patches, each one soft token, all computed
    image = flops(CONFIG, image="640x480").image
    assert (image.patches, image.image_tokens) == (280, 280)
    assert image.patch_embedding == 280 * 2 * 192 * 48  # the position table is looked up
    assert image.projector == 280 * 2 * 48 * 64
    assert image.attention_projections == image.ffn == 0
