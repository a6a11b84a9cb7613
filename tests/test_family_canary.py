"""Canary: a FastConformer encoder (Parakeet's) and a Transformer decoder with cross-attention.

Totals, components, tensors and persistent buffers are held to transformers 5.24 by
tests/test_transformers_agreement.py (the synthetic config and the defaults); here each expected figure is derived by
hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.footprint import kv_cache
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CANARY = str(ROOT / "tests" / "configs" / "synthetic__canary.json")


def fastconformer_block(d: int, heads: int, ffn: int, kernel: int) -> int:
    """Two FFNs (linear1, linear2, biased); attention (q, k, v, o biased, relative_k_proj unbiased, bias_u and bias_v
    of heads · head_dim); the convolution module (pointwise d → 2d, depthwise of kernel taps, pointwise d → d, all
    biased; a BatchNorm of d); five LayerNorms."""
    feed_forward = (d * ffn + ffn) + (ffn * d + d)
    attention = 4 * (d * d + d) + d * d + 2 * d
    conv = (d * 2 * d + 2 * d) + (d * kernel + d) + (d * d + d) + 2 * d
    return 2 * feed_forward + attention + conv + 5 * 2 * d


def test_canary_defaults_by_hand(write_config):
    # CanaryConfig(): canary-1b-v2's encoder (32 blocks of 1,024, 8 heads, FFN 4,096, 9 taps; subsampling by 8: a
    # 3 × 3 convolution 1 → 256, then twice a depthwise 3 × 3 and a 1 × 1 of 256, all biased; a linear 256 · 128 / 8
    # → 1,024); the decoder (vocabulary 16,384, 8 layers of 1,024, 8 heads of 128, MLP 4,096, everything biased, three
    # LayerNorms each; embedding_layernorm, a final norm); proj_out tied but for its bias
    subsampling = (256 * 9 + 256) + 2 * ((256 * 9 + 256) + (256 * 256 + 256)) + (256 * 16 * 1024 + 1024)
    encoder = 32 * fastconformer_block(1024, 8, 4096, 9) + subsampling
    decoder_layer = 2 * 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024) + 3 * 2 * 1024
    decoder = 16384 * 1024 + 2 * 1024 + 8 * decoder_layer + 2 * 1024 + 16384
    assert encoder + decoder == 962_155_520  # transformers 5.24 builds CanaryForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "canary"}))).total_params == encoder + decoder


def test_canary_stores_parakeets_subsampling_and_relative_positions():
    # subsampling_factor 4: layers.0 (1 → 8, 3 × 3), then a depthwise layers.2 and a pointwise layers.3 (ReLUs between
    # hold indices 1 and 4); 20 mel bins // 4 = 5 left for the linear; hidden 48 over 4 heads of 12
    tensors = checkpoint_tensors(load_config(CANARY).spec)
    assert tensors["model.encoder.subsampling.layers.2.weight"] == (8, 1, 3, 3)
    assert tensors["model.encoder.subsampling.layers.3.weight"] == (8, 8, 1, 1)
    assert tensors["model.encoder.subsampling.linear.weight"] == (48, 8 * 5)
    assert tensors["model.encoder.layers.1.self_attn.bias_u"] == (4, 12)
    assert tensors["model.encoder.layers.1.conv.pointwise_conv1.weight"] == (96, 48, 1)
    assert tensors["proj_out.bias"] == (500,)
    assert "proj_out.weight" not in tensors  # tied to model.decoder.embed_tokens


def test_canary_caches_self_and_cross_attention_keys_and_values():
    # 2 decoder layers, 2 key-value heads of 16, at context 100 (the encoder's positions taken as the context):
    # self-attention and cross-attention each 2 (k, v) · 2 · 16 · 100 values, at 2 bytes
    spec = load_config(CANARY).spec
    assert kv_cache(spec, 100, 1, "BF16").bytes == 2 * (2 * 2 * 16 * 100 + 2 * 2 * 16 * 100) * 2
