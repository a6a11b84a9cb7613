"""EXAONE 4.5: an EXAONE 4.0 language model around Qwen2.5-VL's tower with grouped attention (exaone4_5_vision).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__exaone4_5.json, defaults__exaone4_5.json).
"""

import json

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

EXAONE4_5_PATH = ROOT / "tests" / "configs" / "synthetic__exaone4_5.json"
EXAONE4_5 = str(EXAONE4_5_PATH)


def test_exaone4_5_counts_its_grouped_tower_and_merger_by_hand():
    report = account(EXAONE4_5)
    # EXAONE 4.0 (text_config): hidden 64, 4 layers of 4 query heads and
    # 2 KV heads of 24 (q 64 → 96, k and v 64 → 48, o 96 → 64), q/k RMSNorms of 24, SwiGLU of 96, the norms after
    # attention and after the FFN; vocabulary 320, untied (the top-level tie_word_embeddings false decides), final norm
    layer = 64 * 96 + 2 * 64 * 48 + 96 * 64 + 2 * 24 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 4 * layer + 2 * 320 * 64 + 64
    # the tower: a 2 × 14 × 14 patch convolution of 3 channels into 48 (no bias); 4 blocks of fused qkv with bias for
    # 4 query heads of 12 and 2 KV heads: 48 → 48 + 2 · 24 = 96, proj 48 → 48, a gated MLP of 80 with biases, two
    # RMSNorms
    block = (48 * 96 + 96) + (48 * 48 + 48) + 2 * (48 * 80 + 80) + (80 * 48 + 48) + 2 * 48
    assert report.components.vision == 3 * 2 * 14 * 14 * 48 + 4 * block
    # the merger: RMSNorm ln_q (48), 2 × 2 patches side by side (192) through mlp.0 192 → 192, mlp.2 192 → 64
    assert report.components.projector == 48 + (192 * 192 + 192) + (192 * 64 + 64)


def test_one_image_through_exaone4_5s_windowed_tower_by_hand():
    # Qwen2VLImageProcessor's smart_resize: 1024 → 1036, 768 → 756 px; 74 × 54 = 3,996 patches, 37 × 27 = 999 tokens.
    # Blocks 0 and 2 attend within windows of 56 / 2 / 14 = 2 × 2 merged units (4 patches each); the 27 unit rows fall
    # into 13 windows of 2 and one of 1, the 37 columns into 18 of 2 and one of 1: Σ (4 · a · b)² = 16 · 53 · 73 key
    # pairs. Blocks 1 and 3 (fullatt_block_indexes) attend over all 3,996².
    image = flops(EXAONE4_5, image="1024x768").image
    patches, tokens, width, inner, heads, head_dim = 3996, 999, 48, 80, 4, 12
    assert (image.resized_width, image.resized_height) == (1036, 756)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * width) * patches
    assert image.attention_projections == 4 * 2 * (width * 96 + width * width) * patches
    assert image.ffn == 4 * 2 * (3 * width * inner) * patches
    per_key = 2 * heads * (head_dim + head_dim)  # grouped KV heads do not reduce the scores
    assert image.attention_scores == per_key * (2 * 16 * 53 * 73 + 2 * patches * patches)
    assert image.projector == 2 * (192 * 192 + 192 * 64) * tokens


def test_exaone4_5_refuses_query_heads_its_kv_heads_do_not_divide(write_config):
    # Exaone4_5_VisionAttention repeats each KV head num_heads // num_key_value_heads times: 16 over 6 cannot be attended
    config = write_config({"model_type": "exaone4_5", "vision_config": {"num_heads": 16, "num_key_value_heads": 6}})
    with pytest.raises(InvalidConfigError, match="num_key_value_heads"):
        account(str(config))


def test_a_text_config_naming_the_first_releases_exaone4_5_text_is_read_as_exaone4(write_config):
    # Exaone4_5_Config.__post_init__ (configuration_exaone4_5.py, transformers 5.24): text_config's model_type
    # "exaone4_5_text", as EXAONE 4.5 was first released, becomes "exaone4"; the same model either way
    config = json.loads(EXAONE4_5_PATH.read_text())
    config["text_config"]["model_type"] = "exaone4_5_text"
    first_release = account(str(write_config(config)))
    assert first_release.total_params == account(EXAONE4_5).total_params
    assert first_release.language_model_params == account(EXAONE4_5).language_model_params
