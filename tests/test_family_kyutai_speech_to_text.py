"""Kyutai's speech-to-text: Moshi's temporal transformer over text and audio streams, and the Mimi codec.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import math

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .agreement import stored_tensors
from .conftest import ROOT

KYUTAI = str(ROOT / "tests" / "configs" / "synthetic__kyutai_speech_to_text.json")


def conv(out: int, into: int, taps: int, bias: bool = True) -> int:
    return out * into * taps + (out if bias else 0)


def mimi(d: int, filters: int, ratios: list[int], residual_layers: int, kernel: int, last_kernel: int,
         residual_kernel: int, compress: int, shortcut: bool, layers: int, inner: int, q: int, kv: int,
         attention_bias: bool, stride: int, groups: int, vq: int, channels: int = 1) -> int:  # fmt: skip
    """MimiModel's parameters: both SEANet stacks, both transformers, the resampling convolutions (stride > 0) and the
    quantizers' projections (two, where vq differs from d)."""

    def residual(width: int) -> int:
        hidden = width // compress
        block = conv(hidden, width, residual_kernel) + conv(width, hidden, 1)
        return residual_layers * (block + (conv(width, width, 1) if shortcut else 0))

    encoder, scale = conv(filters, channels, kernel), 1
    for ratio in reversed(ratios):
        width = scale * filters
        encoder += residual(width) + conv(2 * width, width, 2 * ratio)
        scale *= 2
    encoder += conv(d, scale * filters, last_kernel)
    decoder = conv(scale * filters, d, kernel)
    for ratio in ratios:
        width = scale * filters
        decoder += width * (width // 2) * 2 * ratio + width // 2 + residual(width // 2)
        scale //= 2
    decoder += conv(channels, filters, last_kernel)
    b = 1 if attention_bias else 0
    layer = (d * q + b * q) + 2 * (d * kv + b * kv) + (q * d + b * d)  # q, k, v, o
    layer += 2 * d * inner + 2 * 2 * d + 2 * d  # fc1, fc2; two LayerNorms; two layer scales
    resample = d * d * 2 * stride + d * (d // groups) * 2 * stride if stride else 0
    quantizer = 2 * 2 * d * vq if vq != d else 0
    return encoder + decoder + 2 * layers * layer + resample + quantizer


def test_kyutai_speech_to_text_defaults_by_hand(write_config):
    # KyutaiSpeechToTextConfig(): H 2,048, 48 layers of 32 heads of 64 (q, k, v, o 2,048²), fc1 2,048 → 11,264 and
    # fc2 5,632 → 2,048, two RMSNorms; a table of 4,001 + 32 · 2,049 + 1 = 69,570 rows, lm_head 4,001, the final
    # norm. MimiConfig(): 512 wide, 64 filters, ratios 8, 6, 5, 4, 8 + 8 transformer layers of 8 heads of 64 (FFN
    # 2,048), a downsample and a grouped upsample of stride 2 (25 Hz → 12.5 Hz), quantizer projections 512 ↔ 256.
    h = 2048
    text = 48 * (4 * h * h + h * 11264 + 5632 * h + 2 * h) + 69570 * h + 4001 * h + h
    codec = mimi(512, 64, [8, 6, 5, 4], 1, 7, 3, 3, 2, False, 8, 2048, 512, 512, False, 2, 512, 256)
    assert text + codec == 2_696_431_425  # transformers 5.24 builds KyutaiSpeechToTextForConditionalGeneration()
    report = account(str(write_config({"model_type": "kyutai_speech_to_text"})))
    assert (report.total_params, report.components.audio) == (text + codec, codec)


def test_kyutai_codebooks_are_saved_as_buffers(write_config):
    # 32 codebooks of 2,048 entries × 256: initialized, cluster_usage and embed_sum each, saved, not parameters
    spec = load_config(str(write_config({"model_type": "kyutai_speech_to_text"}))).spec
    buffers = {name: shape for name, shape in stored_tensors(spec).items() if ".codebook." in name}
    assert len(buffers) == 3 * 32
    assert sum(math.prod(shape) for shape in buffers.values()) == 32 * (1 + 2048 + 2048 * 256)


def test_kyutai_synthetic_by_hand():
    # vocabulary 300 + 3 streams of 17 + 1 = 352 rows × 64, tied (no lm_head); 2 layers of 4 heads of 24 over 2 KV
    # heads, ffn_dim 200. Mimi 32 wide: 4 filters, ratios 3, 2, 2 residual blocks each with shortcuts, 2 + 2 layers
    # of 4 heads of 6 over 2 (biased), FFN 48; 2,400 Hz over hop 6: 400 Hz encodec frames, 200 Hz frames, stride 2;
    # upsample in 8 groups; quantizer projections 32 ↔ 8.
    h = 64
    text = 2 * (2 * h * 96 + 2 * h * 48 + h * 200 + 100 * h + 2 * h) + 352 * h + h
    codec = mimi(32, 4, [3, 2], 2, 5, 3, 3, 2, True, 2, 48, 24, 12, True, 2, 8, 8)
    report = account(KYUTAI)
    assert (report.total_params, report.components.audio, report.components.lm_head) == (text + codec, codec, 0)


def test_kyutai_codec_is_saved_in_mimis_flat_layout():
    tensors = checkpoint_tensors(load_config(KYUTAI).spec)
    # SEANet encoder: layers.0 (4 ← 1, 5 taps), two residual blocks (1, 2), an ELU (3), the stride-2 convolution (4)
    assert tensors["codec_model.encoder.layers.4.conv.weight"] == (8, 4, 4)
    assert tensors["codec_model.encoder.layers.1.shortcut.conv.weight"] == (4, 4, 1)
    # decoder: layers.0 (16 ← 32), an ELU, the transposed convolution 16 → 8 over 6 taps (weight [in, out, taps])
    assert tensors["codec_model.decoder.layers.2.conv.weight"] == (16, 8, 6)
    assert tensors["codec_model.decoder.layers.2.conv.bias"] == (8,)
    assert tensors["codec_model.upsample.conv.weight"] == (32, 32 // 8, 4)
    assert tensors["codec_model.encoder_transformer.layers.1.self_attn.o_proj.bias"] == (32,)
    assert tensors["codec_model.quantizer.acoustic_residual_vector_quantizer.output_proj.weight"] == (32, 8, 1)
    assert tensors["model.embed_tokens.embed_tokens.weight"] == (352, 64)


def test_kyutai_refuses_a_padding_row_outside_its_table(write_config):
    with pytest.raises(InvalidConfigError, match="audio_pad_token_id"):
        account(str(write_config({"model_type": "kyutai_speech_to_text", "audio_pad_token_id": 69570})))
