"""Granite Speech: a Conformer encoder, a windowed Q-Former projector and Granite.

Totals, components, tensors and persistent buffers are held to transformers 5.24 by
tests/test_transformers_agreement.py (the synthetic config and the defaults); here each expected figure is derived by
hand from the config's numbers.
"""

import json
from pathlib import Path

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

GRANITE_SPEECH = str(ROOT / "tests" / "configs" / "synthetic__granite_speech.json")


def conformer_block(d: int, heads: int, dim_head: int, mult: int, expansion: int, kernel: int, max_pos: int) -> int:
    """ff1 and ff2 (a LayerNorm, up d → mult · d and down, biased); attention (a LayerNorm, to_q and to_kv without
    biases, to_out biased, a table of 2 · max_pos + 1 rows of dim_head); the convolution module (a LayerNorm, up_conv
    d → 2 · inner biased, a depthwise convolution of kernel taps, a BatchNorm of inner, down_conv inner → d biased);
    post_norm."""
    inner, wide = expansion * d, mult * d
    ffn = 2 * d + (d * wide + wide) + (wide * d + d)
    attention = 2 * d + d * heads * dim_head + d * 2 * heads * dim_head + (heads * dim_head * d + d)
    attention += (2 * max_pos + 1) * dim_head
    conv = 2 * d + (d * 2 * inner + 2 * inner) + inner * kernel + 2 * inner + (inner * d + d)
    return 2 * ffn + attention + conv + 2 * d


def test_granite_speech_defaults_by_hand(write_config):
    # GraniteSpeechEncoderConfig(): 10 blocks of 1,024 (8 heads of 128, FFN 4,096, inner 2,048, 15 taps, max_pos_emb
    # 512), input_linear 160 → 1,024 and the CTC branch out 1,024 → 42, out_mid 42 → 1,024, all biased
    encoder = 10 * conformer_block(1024, 8, 128, 4, 2, 15, 512) + (160 * 1024 + 1024) + (1024 * 42 + 42)
    encoder += 42 * 1024 + 1024
    # Blip2QFormerConfig(): 3 queries of 768 (window 15 // downsample 5), a LayerNorm, 12 layers (768, FFN 3,072;
    # cross-attention reading encoder_hidden_size 1,408 in every second layer), linear 768 → 4,096 biased
    self_attention = 4 * (768 * 768 + 768) + 2 * 768
    cross_attention = 2 * (768 * 768 + 768) + 2 * (1408 * 768 + 768) + 2 * 768
    ffn = (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 768
    projector = 3 * 768 + 2 * 768 + 12 * (self_attention + ffn) + 6 * cross_attention + (768 * 4096 + 4096)
    # GraniteConfig(): vocabulary 32,000, hidden 4,096, 32 layers of 32 heads, MLP 11,008; tied
    text = 32000 * 4096 + 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 4096
    assert (
        encoder + projector + text == 6_990_441_514
    )  # transformers 5.24 builds GraniteSpeechForConditionalGeneration()
    report = account(str(write_config({"model_type": "granite_speech"})))
    assert report.total_params == encoder + projector + text
    assert (report.components.audio, report.components.projector) == (encoder, projector)


def test_granite_speech_stores_fused_keys_and_values_and_pointwise_convolutions():
    # hidden 32, 4 heads of dim_head 6, inner 3 · 32 = 96, 5 taps; transformers 4's layout (encoder., projector.)
    tensors = checkpoint_tensors(load_config(GRANITE_SPEECH).spec)
    assert tensors["encoder.layers.0.attn.to_kv.weight"] == (2 * 24, 32)
    assert tensors["encoder.layers.0.attn.rel_pos_emb.weight"] == (2 * 20 + 1, 6)
    assert tensors["encoder.layers.2.conv.up_conv.weight"] == (2 * 96, 32, 1)
    assert tensors["encoder.layers.2.conv.depth_conv.conv.weight"] == (96, 1, 5)
    assert tensors["projector.query"] == (1, 6 // 3, 24)
    assert "language_model.lm_head.weight" not in tensors  # tied


def test_granite_speech_saves_each_batch_norms_statistics():
    # running_mean and running_var of inner 96 and num_batches_tracked, in each of 3 blocks: 3 · (2 · 96 + 1) = 579
    # values, as transformers 5.24's persistent buffers
    (saved,) = [extra for extra in load_config(GRANITE_SPEECH).spec.checkpoint_extras if extra.buffer]
    shapes = {tensor.name.format(i=1): tensor.shape for tensor in saved.tensors}
    assert shapes["encoder.layers.1.conv.batch_norm.running_var"] == (96,)
    assert shapes["encoder.layers.1.conv.batch_norm.num_batches_tracked"] == ()
    assert len(saved.per_layer) * sum(max(shape, default=1) for shape in shapes.values()) == 579


GRANITE_SPEECH_PLUS = str(ROOT / "tests" / "configs" / "synthetic__granite_speech_plus.json")


def test_granite_speech_plus_concatenates_blocks_for_the_q_former():
    # cat_hidden_layers [0]: the encoder hands on 2 · 32 features; the Q-Former's cross-attention keys read its
    # encoder_hidden_size 64 (transformers 5.24 refuses any other width)
    tensors = checkpoint_tensors(load_config(GRANITE_SPEECH_PLUS).spec)
    assert tensors["projector.qformer.encoder.layer.0.crossattention.attention.key.weight"] == (24, 64)
    assert account(GRANITE_SPEECH_PLUS).components.audio == account(GRANITE_SPEECH).components.audio


def test_granite_speech_plus_refuses_a_q_former_that_does_not_read_the_concatenation(write_config):
    raw = json.loads(Path(GRANITE_SPEECH_PLUS).read_text())
    raw["projector_config"]["encoder_hidden_size"] = 32
    with pytest.raises(InvalidConfigError, match=r"projector_config\.encoder_hidden_size: 32 must equal"):
        account(str(write_config(raw)))
