"""BLIP (BlipForConditionalGeneration): BLIP's ViT and a BERT text decoder whose every layer cross-attends to the
tower's output, tied to its word table.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__blip.json: 157,696; defaults__blip.json: 223,971,644).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__blip.json")

# cross-attention of 64 whose key and value read the tower's 32: q and o 64 → 64, k and v 32 → 64, all biased
CROSS_ATTENTION = 2 * (64 * 64 + 64) + 2 * (32 * 64 + 64)


def test_blips_text_decoder_by_hand():
    # 2 post-LN layers of 64: q, k, v, o (biased), a cross-attention, fc 64 → 96 → 64 (biased), three LayerNorms;
    # word (320) and position (128) tables and their LayerNorm; cls.predictions' transform (64 → 64, a LayerNorm)
    # and its bias; the decoder tied to the word table
    layer = 4 * (64 * 64 + 64) + CROSS_ATTENTION + (64 * 96 + 96) + (96 * 64 + 64) + 3 * 2 * 64
    embeddings = 320 * 64 + 128 * 64 + 2 * 64
    head = (64 * 64 + 64) + 2 * 64 + 320
    assert account(CONFIG).language_model_params == 2 * layer + embeddings + head == 117440


def test_blips_cross_attention_reads_the_towers_width_by_hand():
    # BlipConfig sets text_config.encoder_hidden_size to the tower's hidden_size (32), whatever the block says
    assert account(CONFIG).components.cross_attention == 2 * CROSS_ATTENTION == 25088


def test_blips_vision_model_by_hand():
    # class token, a 16 × 16 patch convolution 3 → 32 (biased), (64 / 16)² + 1 = 17 positions, 2 layers (qkv
    # 32 → 96, projection, fc1 32 → 48, fc2, all biased; two LayerNorms), post_layernorm
    layer = (32 * 96 + 96) + (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 2 * 32
    assert account(CONFIG).components.vision == 32 + (3 * 16 * 16 * 32 + 32) + 17 * 32 + 2 * layer + 2 * 32 == 40256


def test_a_text_token_cross_attends_to_one_images_17_positions_by_hand():
    # per layer: self-attention over 8 keys and cross-attention over the class token and 16 patches, each
    # 2 · heads · (16 + 16) FLOPs a key
    per_key = 2 * 4 * (16 + 16)
    assert flops(CONFIG, context=8).per_token.attention_scores == 2 * (8 + 17) * per_key


def test_blips_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "blip"}))).total_params == 223971644
