"""IDEFICS (the first): a flat Llama config interleaved with gated cross-attention layers over an image's CLIP
features or a perceiver resampler's latents, with additional token rows kept apart.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__idefics.json: 303,008; synthetic__idefics_tied.json: 252,646;
defaults__idefics.json: 12,670,461,504).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__idefics.json")
TIED = str(ROOT / "tests" / "configs" / "synthetic__idefics_tied.json")

# text: 64 wide, 4 heads of 16 (one key-value head each), a SwiGLU MLP of 96, no biases
MLP = 3 * 64 * 96
DECODER_LAYER = 4 * 64 * 64 + MLP + 2 * 64
# cross_attn: q and o 64 → 64, k and v read the tower's 32
CROSS_PROJECTIONS = 2 * 64 * 64 + 2 * 32 * 64
# CLIP tower of 32: class token, 14 × 14 patch convolution without bias, 17 positions, pre and post LayerNorms, 2
# layers (q, k, v, out_proj, fc1 32 → 48, fc2, all biased; two LayerNorms)
VISION = 32 + 3 * 14 * 14 * 32 + 17 * 32 + 2 * 64 + 2 * (4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32)


def test_idefics_interleaves_one_cross_attention_layer_every_interval_by_hand():
    # 4 layers, cross_layer_interval 2: 2 gated cross-attention layers, each with q and k RMSNorms over a head (16),
    # the MLP, two RMSNorms and two vector gates of 64 (alpha_type "vector")
    cross_layer = CROSS_PROJECTIONS + 2 * 16 + MLP + 2 * 64 + 2 * 64
    tables = 2 * (320 + 2) * 64 + 64  # the token table and head, 2 additional rows each apart; the final norm
    report = account(CONFIG)
    assert report.components.cross_attention == 2 * CROSS_PROJECTIONS
    assert report.language_model_params == 4 * DECODER_LAYER + 2 * cross_layer + tables == 243072


def test_idefics_vision_tower_is_clips_by_hand():
    assert account(CONFIG).components.vision == VISION == 34528


def test_idefics_perceiver_resampler_is_the_projector_by_hand():
    # 8 latents of 32, a final LayerNorm; 2 blocks: LayerNorms over the patches and the latents, q and k LayerNorms
    # over a head (16), q, k, v, output_proj 32 → 2 · 16 (no bias), an MLP LayerNorm, fc 32 → 128, c_proj
    block = 2 * 64 + 2 * 32 + 4 * 32 * 32 + 64 + 2 * 32 * 128
    assert account(CONFIG).components.projector == 8 * 32 + 64 + 2 * block == 25408


def test_a_text_token_cross_attends_to_the_resamplers_latents_by_hand():
    # 4 self-attention layers over 8 keys, 2 cross-attention layers over 8 latents; 2 · heads · (16 + 16) a key
    per_key = 2 * 4 * (16 + 16)
    assert flops(CONFIG, context=8).per_token.attention_scores == (4 * 8 + 2 * 8) * per_key


def test_tied_idefics_ties_both_tables_and_multiplies_the_additional_rows_by_hand():
    # 3 layers, interval 1: 3 cross-attention layers (float gates); 323 token rows, the head tied to both tables
    report = account(TIED)
    cross_layer = CROSS_PROJECTIONS + MLP + 2 * 64 + 2
    assert (report.components.embedding, report.components.lm_head) == (323 * 64, 0)
    assert report.total_params == 3 * DECODER_LAYER + 3 * cross_layer + 323 * 64 + 64 + VISION == 252646
    # the head's 320 rows, and the 3 additional ones (a model-level module: FLOPs under other)
    per_token = flops(TIED, context=8).per_token
    assert (per_token.lm_head, per_token.other) == (2 * 320 * 64, 2 * 3 * 64)


def test_a_text_token_without_the_resampler_cross_attends_to_one_images_17_positions_by_hand():
    per_key = 2 * 4 * (16 + 16)
    assert flops(TIED, context=8).per_token.attention_scores == (3 * 8 + 3 * 17) * per_key


def test_idefics_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "idefics"}))).total_params == 12670461504
