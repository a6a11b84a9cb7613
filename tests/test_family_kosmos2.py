"""Kosmos-2: a CLIP tower, an image-to-text projection that pools it into latent queries by cross-attention, and an
XGLM-like decoder with sub-LayerNorms.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__kosmos-2.json: 133,728; synthetic__kosmos-2_untied.json: 187,744;
defaults__kosmos-2.json: 1,664,485,376).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__kosmos-2.json")
UNTIED = str(ROOT / "tests" / "configs" / "synthetic__kosmos-2_untied.json")

# 2 layers of 64: self_attn_layer_norm, q, k, v, out_proj (biased), inner_attn_ln; final_layer_norm, fc1 64 → 96 and
# fc2 (biased), ffn_layernorm over 96; a final layer_norm; a 320 × 64 token table (sinusoidal positions: no weights)
ATTENTION = 4 * (64 * 64 + 64)
FFN = (64 * 96 + 96) + (96 * 64 + 64)
NORMS = 3 * 2 * 64 + 2 * 96
LANGUAGE_MODEL = 2 * (ATTENTION + FFN + NORMS) + 2 * 64 + 320 * 64


def test_kosmos2s_language_model_with_its_sub_layernorms_by_hand():
    report = account(CONFIG)
    assert report.components.norm == 2 * NORMS + 2 * 64
    assert report.language_model_params == LANGUAGE_MODEL


def test_kosmos2s_projection_pools_into_latent_queries_by_hand():
    # dense 32 → 64 (biased), latent_query 8 × 64, x_attn q, k, v, out_proj 64 → 64 (biased)
    assert account(CONFIG).components.projector == (32 * 64 + 64) + 8 * 64 + 4 * (64 * 64 + 64) == 19264


def test_kosmos2s_tower_is_clips_one_level_down_by_hand():
    # class token, 14 × 14 patch convolution 3 → 32 without bias, (56 / 14)² + 1 = 17 positions, pre_layrnorm,
    # 2 layers (q, k, v, out_proj 32 → 32, fc1 32 → 48, fc2, all biased; two LayerNorms), post_layernorm
    layer = 4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32
    assert account(CONFIG).components.vision == 32 + 3 * 14 * 14 * 32 + 17 * 32 + 64 + 2 * layer + 64 == 34528


def test_kosmos2_is_tied_when_either_flag_says_so_and_untied_when_neither_does():
    # synthetic__kosmos-2: the wrapper's false, text_config's true: tied; *_untied: both false
    assert account(CONFIG).components.lm_head == 0
    assert account(UNTIED).components.lm_head == 320 * 64


def test_kosmos2s_text_model_with_add_cross_attention_builds_encoder_attn_by_hand():
    # encoder_attn (q, k, v, out_proj biased, no inner norm) and encoder_attn_layer_norm in each of 2 layers
    report = account(UNTIED)
    assert report.components.cross_attention == 2 * ATTENTION
    assert report.components.norm == 2 * NORMS + 2 * 64 + 2 * 2 * 64


def test_kosmos2s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "kosmos-2"}))).total_params == 1664485376


def test_one_image_through_kosmos2_by_hand():
    # resized to 56 × 56: 16 patches (17 positions with the class token), 8 latent tokens
    image = flops(CONFIG, image="640x480").image
    assert (image.patches, image.image_tokens) == (16, 8)
    assert image.attention_projections == 2 * 2 * (4 * 32 * 32) * 17
    # per patch: the convolution, dense 32 → 64, x_attn's k and v; per latent token: q and out_proj
    assert image.patch_embedding == 2 * (3 * 14 * 14 * 32 + 32 * 64 + 2 * 64 * 64) * 16
    assert image.projector == 2 * (2 * 64 * 64) * 8
