"""Ovis2: a Qwen2 language model around an RMSNorm vision transformer whose head scores a visual vocabulary, and a
visual embedding table those probabilities multiply.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__ovis2.json: 178,342; synthetic__ovis2_own_head.json: 200,262;
defaults__ovis2.json: 11,778,684,918).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__ovis2.json")
OWN_HEAD = str(ROOT / "tests" / "configs" / "synthetic__ovis2_own_head.json")

# Both towers: a biased 14 × 14 patch convolution of 3 channels into 32, its RMSNorm, (56 / 14)² = 16 positions,
# 2 layers (q, k, v, out_proj 32 → 32; a gated MLP 32 → 48 → 32; two RMSNorms), a final RMSNorm; then head_linear
# over stride² patches into 200 − 5 = 195 logits (no bias) and head_norm (195, biased)
STEM = (3 * 14 * 14 * 32 + 32) + 32 + 16 * 32 + 32 + 2 * 195


def test_ovis2s_tower_with_its_visual_vocabulary_head_by_hand():
    # qkv_bias: every attention linear biased; hidden_stride 2: head_linear reads 4 · 32 = 128
    layer = 4 * (32 * 32 + 32) + 3 * 32 * 48 + 2 * 32
    assert account(CONFIG).components.vision == STEM + 2 * layer + 128 * 195 == 62566


def test_ovis2s_visual_embedding_table_is_vision_vocab_by_the_wrappers_hidden_size_by_hand():
    assert account(CONFIG).components.other == 200 * 64
    assert account(OWN_HEAD).components.other == 200 * 48  # the wrapper's hidden_size (48), not text_config's (64)


def test_an_untied_ovis2_head_is_the_wrappers_vocab_size_by_hidden_size_by_hand():
    # lm_head = nn.Linear(config.hidden_size, config.vocab_size): 300 × 48, whatever text_config's table (320 × 64)
    report = account(OWN_HEAD)
    assert report.components.lm_head == 300 * 48
    assert report.components.embedding == 320 * 64


def test_ovis2s_default_config_ties_its_head_to_qwen2s_table(write_config):
    # Qwen2's defaults: a 151,936 × 4,096 table; tie_word_embeddings true: no head of its own, whatever the wrapper's
    # vocab_size (151,643) and hidden_size (1,536) say; the visual table is 16,384 × 1,536
    report = account(str(write_config({"model_type": "ovis2"})))
    assert report.components.lm_head == 0
    assert report.components.embedding == 151936 * 4096
    assert report.components.other == 16384 * 1536


def test_one_image_through_ovis2_pads_the_patch_grid_to_whole_strides_by_hand():
    # every image is the tower's 56-pixel square: 4 × 4 patches; hidden_stride 3 pads each side to 6: 2 × 2 tokens
    image = flops(OWN_HEAD, image="640x480").image
    assert (image.patches, image.image_tokens) == (16, 4)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * 32) * 16
    # per token: head_linear 9 · 32 → 195, then the probabilities times the 200 × 48 table
    assert image.projector == 2 * (288 * 195 + 200 * 48) * 4
