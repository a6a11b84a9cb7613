"""Kosmos-2.5: Kosmos-2's projection and decoder (no sub-LayerNorm in the attention, a segment table) over
Pix2Struct's patch encoder.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__kosmos-2.5.json: 116,672; synthetic__kosmos-2.5_untied.json: 137,152;
defaults__kosmos-2.5.json: 1,374,646,272).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__kosmos-2.5.json")
UNTIED = str(ROOT / "tests" / "configs" / "synthetic__kosmos-2.5_untied.json")

# 2 layers of 64: q, k, v, out_proj (biased), fc1 64 → 96 and fc2 (biased), LayerNorms self_attn_layer_norm and
# final_layer_norm (64) and ffn_layernorm (96); a 320 × 64 token table, a final layer_norm, segment_emb 2 × 64
LAYER = 4 * (64 * 64 + 64) + (64 * 96 + 96) + (96 * 64 + 64) + 2 * 2 * 64 + 2 * 96
LANGUAGE_MODEL = 2 * LAYER + 320 * 64 + 2 * 64 + 2 * 64


def test_kosmos2_5s_language_model_has_no_attention_sub_layernorm_by_hand():
    report = account(CONFIG)
    assert report.components.norm == 2 * (2 * 2 * 64 + 2 * 96) + 2 * 64
    assert report.components.other == 2 * 64  # segment_emb
    assert report.language_model_params == LANGUAGE_MODEL == 79808


def test_kosmos2_5s_tower_is_pix2structs_patch_encoder_by_hand():
    # 32 wide, 2 heads of 8: query, key, value 32 → 16, output 16 → 32, gated MLP of 40 (no biases), two RMS norms;
    # patch_projection 48 → 32 (biased), row and column tables of 64, a final layernorm
    layer = 3 * 32 * 16 + 16 * 32 + 3 * 32 * 40 + 2 * 32
    assert account(CONFIG).components.vision == 2 * layer + (48 * 32 + 32) + 2 * 64 * 32 + 32 == 17600


def test_kosmos2_5s_projection_is_kosmos2s_by_hand():
    # dense 32 → 64 (biased), latent_query 8 × 64, x_attn q, k, v, out_proj 64 → 64 (biased)
    assert account(CONFIG).components.projector == (32 * 64 + 64) + 8 * 64 + 4 * (64 * 64 + 64) == 19264


def test_only_text_configs_flag_ties_kosmos2_5s_head_by_hand():
    # synthetic__kosmos-2.5: the wrapper's false, text_config's true: tied; *_untied: the wrapper's true, text's false
    assert account(CONFIG).components.lm_head == 0
    assert account(UNTIED).components.lm_head == 320 * 64
    assert account(UNTIED).total_params == 116672 + 320 * 64


def test_one_image_through_kosmos2_5_is_4096_padded_patches_by_hand():
    image = flops(CONFIG, image="640x480").image
    assert (image.patches, image.image_tokens) == (4096, 8)
    # per layer and patch: q, k, v, output; scores over 4,096 patches, 2 · heads · (8 + 8) a key
    assert image.attention_projections == 2 * 2 * (3 * 32 * 16 + 16 * 32) * 4096
    assert image.attention_scores == 2 * 4096 * 4096 * 2 * 2 * (8 + 8)
    # per patch: patch_projection, dense 32 → 64, x_attn's k and v; per latent token: q and out_proj
    assert image.patch_embedding == 2 * (48 * 32 + 32 * 64 + 2 * 64 * 64) * 4096
    assert image.projector == 2 * (2 * 64 * 64) * 8


def test_kosmos2_5s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "kosmos-2.5"}))).total_params == 1374646272
