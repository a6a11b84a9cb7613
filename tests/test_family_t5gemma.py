"""T5Gemma (t5gemma): two Gemma-2 stacks, each from its own block, the decoder's layers with cross-attention.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__t5gemma.json")


def test_t5gemma_defaults_by_hand(write_config):
    # T5GemmaModuleConfig() for both blocks: vocabulary 256,000, d 2,304, 26 layers of 8 heads and 4 key-value heads
    # of 256, GeGLU 9,216 wide, four RMSNorms a layer; the decoder's layers also hold cross-attention (the same
    # shapes, k and v reading the encoder's 2,304) and two more norms. Two token tables, two final norms, the head
    # tied to the decoder's table.
    d, ffn, q, kv = 2304, 9216, 8 * 256, 4 * 256
    attention = 2 * d * q + 2 * d * kv
    encoder = attention + 3 * d * ffn + 4 * d
    decoder = 2 * attention + 3 * d * ffn + 6 * d
    total = 2 * 256000 * d + 26 * encoder + 26 * decoder + 2 * d
    assert total == 5_596_853_760  # transformers 5.24 builds T5GemmaForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "t5gemma"}))).total_params == total


def test_t5gemma_cross_attention_reads_the_encoders_width():
    # decoder d 64, 2 heads and 1 key-value head of 24; the encoder's hidden_size is 96
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["model.decoder.layers.0.cross_attn.q_proj.weight"] == (48, 64)
    assert tensors["model.decoder.layers.0.cross_attn.k_proj.weight"] == (24, 96)
    assert tensors["model.decoder.layers.1.cross_attn.o_proj.weight"] == (64, 48)
    assert tensors["model.encoder.embed_tokens.weight"] == (1000, 96)
    assert "lm_head.out_proj.weight" not in tensors  # tied to model.decoder.embed_tokens


def test_t5gemma_encoder_windows_reach_either_side():
    # the encoder's sliding layers (0 and 2 by default) attend sliding_window 8 keys either side and themselves
    windows = [layer.attention.window for layer in load_config(SYNTHETIC).spec.layers if layer.stack == "encoder"]
    assert windows == [17, None, 17]


def test_t5gemma_token_runs_the_decoder_with_its_windows_and_cross_attention():
    # 2 decoder layers: self q, k, v, o (64·48 + 64·24 + 64·24 + 48·64) and cross q and o (the cross keys and values
    # run once per encoder position), GeGLU 3 · 64 · 128; scores 2 · 2 heads · (24 + 24) = 192 a key: layer 0 full
    # (16 keys), layer 1 a window of 6, cross-attention 16 encoder positions in each layer.
    per_token = flops(SYNTHETIC, 16).per_token
    assert per_token.attention_projections == 2 * 2 * (9216 + 6144)
    assert per_token.ffn == 2 * 2 * 3 * 64 * 128
    assert per_token.attention_scores == 192 * (16 + 6 + 2 * 16)


def test_t5gemma_cache_holds_windows_and_cross_attention():
    # k and v of one head of 24 (48 elements a position): layer 0 40 positions, layer 1 its window of 6, and each
    # layer's cross-attention 40 encoder positions; BF16
    assert memory(SYNTHETIC, 40, dtype="bf16").kv_cache.bytes == 48 * (40 + 6 + 2 * 40) * 2


def test_t5gemma_encoder_classifier_builds_no_decoder():
    # is_encoder_decoder false: T5GemmaEncoderModel and score.out_proj 48 → 5 with bias
    report = account(str(ROOT / "tests" / "configs" / "synthetic__t5gemma_encoder_classifier.json"))
    assert report.components.cross_attention == 0
    assert report.outside_layers["other.score.out_proj"] == 48 * 5 + 5


def test_t5gemma_block_errors_name_the_block(write_config):
    config = {"model_type": "t5gemma", "decoder": {"num_hidden_layers": 0}}
    with pytest.raises(InvalidConfigError, match=r"decoder\.num_hidden_layers"):
        account(str(write_config(config)))
