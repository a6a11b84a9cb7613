"""Moonshine: a speech encoder over the raw waveform (three convolutions, pre-LN layers) and a text decoder with
cross-attention and a gated MLP.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SYNTHETIC = str(CONFIGS / "synthetic__moonshine.json")
HEADS = str(CONFIGS / "synthetic__moonshine_model_heads.json")


def test_moonshine_defaults_by_hand(write_config):
    # MoonshineConfig() (moonshine-tiny's shape): vocabulary 32,768, hidden 288, 6 + 6 layers of 8 heads, MLP 1,152,
    # no attention biases; every LayerNorm without bias; proj_out tied to the token table.
    d, inner = 288, 1152
    encoder = 4 * d * d + (d * inner + inner) + (inner * d + d) + 2 * d
    decoder = 2 * 4 * d * d + (d * 2 * inner + 2 * inner) + (inner * d + d) + 3 * d
    # conv1 (1 → d, 127 taps, no bias), conv2 (d → 2d, 7 taps), conv3 (2d → d, 3 taps), GroupNorm weight and bias
    convs = d * 127 + (2 * d * d * 7 + 2 * d) + (d * 2 * d * 3 + d) + 2 * d
    total = 32768 * d + 6 * encoder + 6 * decoder + convs + d + d  # the encoder's and the decoder's final norms
    assert total == 27_092_736  # transformers 5.24 builds MoonshineForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "moonshine"}))).total_params == total


def test_moonshine_decoder_mlp_emits_value_and_gate_from_one_fc1():
    # fc1: hidden 64 → 2 · intermediate 96, with bias; fc2: 96 → 64
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["model.decoder.layers.0.mlp.fc1.weight"] == (192, 64)
    assert tensors["model.decoder.layers.0.mlp.fc1.bias"] == (192,)
    assert tensors["model.encoder.layers.0.mlp.fc1.weight"] == (96, 64)
    assert tensors["model.encoder.conv1.weight"] == (64, 1, 127)
    assert "model.encoder.conv1.bias" not in tensors
    assert "model.decoder.layers.0.self_attn.o_proj.bias" not in tensors  # o_proj never has one
    assert tensors["model.decoder.layers.0.encoder_attn.k_proj.bias"] == (32,)  # attention_bias: 2 kv heads of 16


def test_moonshine_decoder_is_built_with_the_encoders_head_counts():
    # decoder_num_attention_heads 2 and decoder_num_key_value_heads 1 are overwritten by the encoder's 4 and 2 while
    # transformers 5.24 builds the encoder (MoonshineAttention's config.update): head_dim 64 // 4 = 16, k and v 2 · 16
    tensors = checkpoint_tensors(load_config(HEADS).spec)
    assert tensors["decoder.layers.0.self_attn.k_proj.weight"] == (32, 64)
    assert tensors["decoder.layers.0.encoder_attn.q_proj.weight"] == (64, 64)
    assert any(
        "built with the encoder's 4 heads and 2 key-value heads" in note for note in load_config(HEADS).info.notes
    )


def test_moonshine_token_runs_the_decoders_gated_mlp_and_attends_over_the_context_twice():
    # per decoder layer: fc1 64 → 192 and fc2 96 → 64; self-attention and cross-attention each 2 · 4 · (16 + 16) per
    # key, over the context's 8 keys and, as the encoder's length is the context, 8 encoder positions
    per_token = flops(SYNTHETIC, 8).per_token
    assert per_token.ffn == 3 * 2 * (64 * 192 + 96 * 64)
    assert per_token.attention_scores == 3 * 2 * (2 * 4 * 32 * 8)


def test_moonshine_cache_holds_self_and_cross_attention_keys_and_values():
    # 3 decoder layers × 2 (k, v) × 2 kv heads × 16 per position, BF16, for 48 positions each
    cache = memory(SYNTHETIC, 48, dtype="bf16").kv_cache
    assert [(row.kind, row.bytes) for row in cache.layers] == [
        ("attention", 3 * 2 * 32 * 2 * 48),
        ("cross-attention (encoder output)", 3 * 2 * 32 * 2 * 48),
    ]
