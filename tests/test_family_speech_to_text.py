"""S2T (speech_to_text): strided convolutions with gated linear units over log-mel features, a pre-LN encoder and a
text decoder with cross-attention; sinusoidal positions that hold no parameters.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__speech_to_text.json")


def test_speech_to_text_defaults_by_hand(write_config):
    # Speech2TextConfig() (s2t-small's shape): vocabulary 10,000, d 256, 12 encoder and 6 decoder layers of FFN 2,048,
    # every linear and LayerNorm biased; two convolutions of 5 taps: 80 features → 1,024 channels, whose GLU leaves
    # 512, → 2 · 256; no position parameters (sinusoidal buffers, not saved); lm_head tied to the token table.
    d, ffn = 256, 2048
    encoder = 4 * (d * d + d) + 2 * d * ffn + ffn + d + 2 * 2 * d
    decoder = 8 * (d * d + d) + 2 * d * ffn + ffn + d + 3 * 2 * d
    convs = (1024 * 80 * 5 + 1024) + (512 * 512 * 5 + 512)
    total = 10000 * d + 12 * encoder + 6 * decoder + convs + 2 * 2 * d
    assert total == 29_536_256  # transformers 5.24 builds Speech2TextForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "speech_to_text"}))).total_params == total


def test_each_convolution_reads_half_the_channels_the_previous_one_emits():
    # 20 features × 2 input channels → 48 (5 taps); its GLU leaves 24 → 48 (3 taps); 24 → 2 · d_model 128 (3 taps)
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["model.encoder.conv.conv_layers.0.weight"] == (48, 40, 5)
    assert tensors["model.encoder.conv.conv_layers.1.weight"] == (48, 24, 3)
    assert tensors["model.encoder.conv.conv_layers.2.weight"] == (128, 24, 3)
    assert tensors["model.encoder.conv.conv_layers.2.bias"] == (128,)
    assert not any("embed_positions" in name for name in tensors)


def test_a_kernel_size_per_convolution_is_required(write_config):
    config = {"model_type": "speech_to_text", "num_conv_layers": 3, "conv_kernel_sizes": [5, 5]}
    with pytest.raises(InvalidConfigError, match="conv_kernel_sizes has 2 entries for num_conv_layers"):
        account(str(write_config(config)))


def test_speech_to_text_token_runs_the_decoder_and_its_cross_attention_over_the_context():
    # 3 decoder layers, d 64, 2 heads of 32: q, k, v, out_proj and cross q and out_proj (the cross keys and values
    # are projected once per encoder position), fc1 64 → 80 and fc2; the tied head 1,000 × 64; scores
    # 2 · 2 · (32 + 32) per key, self and cross, over 16 keys each
    per_token = flops(SYNTHETIC, 16).per_token
    assert per_token.attention_projections == 3 * 2 * 6 * 64 * 64
    assert per_token.ffn == 3 * 2 * 2 * 64 * 80
    assert per_token.lm_head == 2 * 1000 * 64
    assert per_token.attention_scores == 2 * 3 * 256 * 16


def test_speech_to_text_cache_holds_self_and_cross_attention_keys_and_values():
    cache = memory(SYNTHETIC, 40, dtype="bf16").kv_cache
    assert cache.bytes == 2 * 3 * (2 * 64 * 40) * 2  # self and cross, 3 layers, k and v of 64, 40 positions, BF16
