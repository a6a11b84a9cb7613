"""Apertus 1.5 (apertus1p5): its language model beside two tokenizers that turn images and audio into tokens of its
vocabulary, a VQ-GAN encoder and WavTokenizer's encoder.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__apertus1p5.json: 382,764; synthetic__apertus1p5_pruned.json: 375,256;
synthetic__apertus1p5_tied.json: 362,456; defaults__apertus1p5.json: 8,317,544,000).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__apertus1p5.json")
PRUNED = str(ROOT / "tests" / "configs" / "synthetic__apertus1p5_pruned.json")
TIED = str(ROOT / "tests" / "configs" / "synthetic__apertus1p5_tied.json")

# 2 layers of 64: q 4 heads of 16, k and v 2 heads, o; q and k norms over a head; up and down 64 → 96 → 64 with
# xIELU's two scalars; two RMSNorms; 320-row table and head, the final norm
LAYER = (64 * 64 + 2 * 64 * 32 + 64 * 64) + 2 * 16 + 2 * 64 * 96 + 2 + 2 * 64
LANGUAGE_MODEL = 2 * LAYER + 2 * 320 * 64 + 64


def conv(in_channels, out_channels, kernel):
    """A biased 2-D convolution."""
    return in_channels * out_channels * kernel * kernel + out_channels


def test_apertus1p5s_language_model_by_hand():
    assert account(CONFIG).language_model_params == LANGUAGE_MODEL == 90500


def test_apertus1p5s_vision_tokenizer_is_a_vq_gan_encoder_by_hand():
    # base 32, channel_multiplier [1, 2], one block a stage, attention where the resolution is 16 (the second stage)
    def resnet(i, o):  # two GroupNorms, two 3 × 3 convolutions, a 1 × 1 shortcut where the channels change
        return 2 * i + conv(i, o, 3) + 2 * o + conv(o, o, 3) + (conv(i, o, 1) if i != o else 0)

    attention = 2 * 64 + 4 * conv(64, 64, 1)
    encoder = conv(3, 32, 3) + resnet(32, 32) + conv(32, 32, 3) + resnet(32, 64) + attention
    encoder += 2 * resnet(64, 64) + attention + 2 * 64 + conv(64, 32, 3)  # mid, norm_out, conv_out to latent 32
    # quant_conv 32 → 8, the codebook scored by a linear 8 → 16
    assert account(CONFIG).components.vision == encoder + conv(32, 8, 1) + 8 * 16 == 287240


def test_apertus1p5s_audio_tokenizer_is_wavtokenizers_weight_normed_encoder_by_hand():
    def wn(i, o, k):  # weight norm: g [o, 1, 1] and v [o, i, k], and a bias
        return o + o * i * k + o

    ratios = (
        wn(4, 2, 3) + wn(2, 4, 1) + wn(4, 4, 1) + wn(4, 8, 4) + wn(8, 4, 3) + wn(4, 8, 1) + wn(8, 8, 1) + wn(8, 16, 4)
    )
    lstm = 2 * 64 * 16 + 2 * 64  # one layer of 16: four gates
    assert account(CONFIG).components.audio == wn(1, 4, 7) + ratios + lstm + wn(16, 16, 7) == 5024


def test_apertus1p5s_audio_tokenizer_with_time_group_norm_by_hand():
    # plain convolutions, each followed by a GroupNorm (weight and bias); 2 residual blocks a ratio, no shortcuts
    def tg(i, o, k):
        return o * i * k + o + 2 * o

    ratios = 2 * (tg(4, 2, 3) + tg(2, 4, 1)) + tg(4, 8, 4) + 2 * (tg(8, 4, 3) + tg(4, 8, 1)) + tg(8, 16, 4)
    assert account(PRUNED).components.audio == tg(1, 4, 7) + ratios + 2 * 64 * 16 + 2 * 64 + tg(16, 16, 7) == 5196


def test_apertus1p5s_head_is_pruned_unless_the_wrapper_ties_it_by_hand():
    # output_vocab_size 200: a head of 200 rows; the wrapper's tie_word_embeddings true: the head is the whole table
    assert account(PRUNED).components.lm_head == 200 * 64
    assert account(TIED).components.lm_head == 0
    assert account(TIED).total_params == LANGUAGE_MODEL - 320 * 64 + 287240 + 5196 == 362456


def test_an_apertus1p5_text_token_runs_the_language_model_only_by_hand():
    # per token at context 8: q, k, v, o; up and down; the 320-row head; 2 · heads · (16 + 16) a key
    per_token = flops(CONFIG, context=8).per_token
    assert per_token.total == 2 * 2 * (12288 + 2 * 64 * 96) + 2 * 320 * 64 + 2 * 8 * 2 * 4 * (16 + 16)


def test_apertus1p5s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "apertus1p5"}))).total_params == 8317544000
