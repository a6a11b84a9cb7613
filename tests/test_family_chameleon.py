"""Chameleon: Llama's layers with a LayerNorm over each head's queries and keys (stored [heads, head_dim]), and the
VQ-GAN encoder that turns an image into tokens of the vocabulary.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__chameleon.json: 464,224; synthetic__chameleon_swin.json: 467,556).
transformers cannot build a Chameleon without vocabulary_map (defaults__chameleon.json records its AttributeError).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import InvalidConfigError, UsageError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
CHAMELEON = str(CONFIGS / "synthetic__chameleon.json")
SWIN = str(CONFIGS / "synthetic__chameleon_swin.json")


def conv(inputs, outputs, kernel):
    return inputs * outputs * kernel * kernel + outputs


def resnet(inputs, outputs):
    shortcut = conv(inputs, outputs, 1) if inputs != outputs else 0
    return 2 * inputs + conv(inputs, outputs, 3) + 2 * outputs + conv(outputs, outputs, 3) + shortcut


def attention_block(channels):
    return 2 * channels + 4 * conv(channels, channels, 1)


def test_chameleons_vq_gan_encoder_codebook_and_quant_convs_are_the_vision_tower_by_hand():
    report = account(CHAMELEON)
    # base 32, channel_multiplier [1, 2], one block a level; 32 px, then 16 px at level 1, which attn_resolutions
    # [16] names; the middle's two blocks around an attention block; conv_out to 8 latent channels; 50 codes of 16
    encoder = (
        conv(3, 32, 3)
        + resnet(32, 32)
        + conv(32, 32, 3)  # level 0's downsample
        + resnet(32, 64)
        + attention_block(64)
        + 2 * resnet(64, 64)
        + attention_block(64)
        + 2 * 64
        + conv(64, 8, 3)
    )
    assert report.components.vision == encoder + 50 * 16 + conv(8, 16, 1) + conv(16, 8, 1)


def test_chameleons_query_and_key_norms_are_layernorms_with_bias_stored_per_head():
    tensors = checkpoint_tensors(load_config(CHAMELEON).spec)
    # ChameleonLayerNorm((heads, head_dim)): 4 query heads and 2 key heads of 16
    assert tensors["model.layers.0.self_attn.q_norm.weight"] == (4, 16)
    assert tensors["model.layers.0.self_attn.q_norm.bias"] == (4, 16)
    assert tensors["model.layers.1.self_attn.k_norm.bias"] == (2, 16)
    report = account(CHAMELEON)
    # per layer: q and k norms (64 + 64 and 32 + 32) and two RMSNorms of 64; the final RMSNorm
    assert report.components.norm == 2 * (128 + 64 + 2 * 64) + 64


def test_chameleons_key_value_heads_default_to_32_whatever_the_query_heads():
    report = account(SWIN)
    # ChameleonConfig's num_key_value_heads is 32: k and v are 32 × 12 wide over 4 query heads (attention_bias)
    assert report.components.attention == 2 * (48 * 48 + 48) + 2 * (48 * 384 + 384)
    assert report.components.lm_head == 0  # tied by tie_word_embeddings


def test_a_text_token_never_runs_the_vq_gan():
    per_token = flops(CHAMELEON, 1).per_token
    assert per_token.ffn == 2 * 2 * 3 * 64 * 96
    assert per_token.attention_projections == 2 * 2 * (2 * 64 * 64 + 2 * 64 * 32)


def test_chameleons_image_flops_are_refused_as_a_convolutional_tokenizer():
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(CHAMELEON, image="512x512")


def test_chameleon_without_vocabulary_map_is_refused_as_transformers_cannot_build_it(write_config):
    with pytest.raises(InvalidConfigError, match="vocabulary_map"):
        account(str(write_config({"model_type": "chameleon"})))


def test_a_vq_gan_whose_channels_groupnorm_cannot_split_is_refused_naming_the_field(write_config):
    config = {"model_type": "chameleon", "vocabulary_map": {}, "vq_config": {"base_channels": 48}}
    with pytest.raises(InvalidConfigError, match="vq_config"):
        account(str(write_config(config)))
