"""PaddleOCR-VL: an ERNIE-4.5 language model (paddleocr_vl_text) around a SigLIP tower and a 2 × 2 merging projector.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__paddleocr_vl.json, synthetic__paddleocr_vl_nested.json,
defaults__paddleocr_vl.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

FLAT = str(ROOT / "tests" / "configs" / "synthetic__paddleocr_vl.json")
NESTED = str(ROOT / "tests" / "configs" / "synthetic__paddleocr_vl_nested.json")

# The tower of both synthetic configs: a biased 14 × 14 patch convolution of 3 channels into 48, (112 / 14)² = 64
# learned positions, 2 SigLIP layers (q, k, v, out 48 → 48 and fc1 48 → 80, fc2 80 → 48, all biased; two LayerNorms),
# post_layernorm.
TOWER = (3 * 14 * 14 * 48 + 48) + 64 * 48 + 2 * (4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 4 * 48) + 2 * 48
# pre_norm (48, biased), 2 × 2 patches side by side: linear_1 192 → 192, linear_2 192 → 64, biased
PROJECTOR = 2 * 48 + (192 * 192 + 192) + (192 * 64 + 64)


def test_a_flat_paddleocr_vl_config_reads_its_language_model_from_the_top_level_keys_by_hand():
    report = account(FLAT)
    # the top-level keys: hidden 64, 2 layers of 4 query heads and 2 KV heads of 24 with use_bias on q, k, v, o and
    # the SwiGLU of 96; two RMSNorms a layer and a final one; 320 × 64 token table
    layer = (64 * 96 + 96) + 2 * (64 * 48 + 48) + (96 * 64 + 64) + 3 * (64 * 96) + 2 * 96 + 64 + 2 * 64
    assert report.language_model_params == 2 * layer + 64 + 320 * 64
    assert report.components.vision == TOWER
    assert report.components.projector == PROJECTOR


def test_a_flat_paddleocr_vl_config_is_tied_by_its_language_models_default_whatever_its_own_flag_says():
    # PaddleOCRVLConfig.__post_init__ builds text_config from the top-level keys the wrapper does not declare:
    # tie_word_embeddings stays the wrapper's (false), text_config's keeps its default (true), and true ties
    assert account(FLAT).components.lm_head == 0


def test_a_nested_paddleocr_vl_config_with_both_flags_false_is_untied_by_hand():
    report = account(NESTED)
    # text_config: head_dim null (64 // 4 = 16 a head) and use_bias false: q, k, v, o and the MLP unbiased
    layer = 64 * 64 + 2 * (64 * 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 64 + 2 * 320 * 64
    assert report.components.lm_head == 320 * 64


def test_one_image_through_paddleocr_vls_tower_by_hand():
    # smart_resize to multiples of 14 · 2 = 28: 1024 → 1036, 768 → 756; 54 × 74 = 3,996 patches, 999 tokens
    image = flops(FLAT, image="1024x768").image
    patches, tokens = 3996, 999
    assert (image.resized_width, image.resized_height) == (1036, 756)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * 48) * patches  # the position table is looked up
    assert image.attention_projections == 2 * 2 * (4 * 48 * 48) * patches
    assert image.attention_scores == 2 * 2 * 4 * (12 + 12) * patches * patches
    assert image.ffn == 2 * 2 * (2 * 48 * 80) * patches
    assert image.projector == 2 * (192 * 192 + 192 * 64) * tokens
