"""SpeechEncoderDecoderModel (speech-encoder-decoder): a Wav2Vec2 speech encoder and a decoder of BERT's lineage with
cross-attention, composed as EncoderDecoderModel's.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py
(tests/expected/transformers/defaults__speech-encoder-decoder.json: 232,252,858; synthetic__speech_encoder_decoder.json:
262,296); the FLOPs to FlopCounterMode on a forward of the 170 raw samples that become 16 encoder positions and 16
target tokens (tests/expected/flop_counter.json, tools/flop_count.py); here each expected figure is also derived by
hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__speech_encoder_decoder.json")
COUNTED = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__speech_encoder_decoder"]


def bert_layer(h: int, ffn: int, cross: bool = False) -> int:
    """q, k, v, o h² + h each, the MLP with its biases, two LayerNorms; cross-attention four more and a LayerNorm."""
    own = 4 * (h * h + h) + 2 * h * ffn + ffn + h + 2 * 2 * h
    return own + (4 * (h * h + h) + 2 * h if cross else 0)


def test_the_default_is_wav2vec2_to_bert_by_hand(write_config):
    # SpeechEncoderDecoderConfig(): Wav2Vec2Model (seven convolutions of 512 without biases, kernels 10, 3 × 4, 2 × 2,
    # the first one's GroupNorm; the feature projection 512 → 768; masked_spec_embed, as mask_time_prob is 0.05; the
    # weight-normed position convolution of 128 taps in 16 groups; a LayerNorm; 12 layers of 768) and BertLMHeadModel
    # with is_decoder and add_cross_attention; both 768 wide, so no enc_to_dec_proj
    convolutions = 512 * 10 + 4 * 512 * 512 * 3 + 2 * 512 * 512 * 2 + 2 * 512
    front = convolutions + 2 * 512 + (512 * 768 + 768) + 768 + (128 + 768 * 48 * 128 + 768) + 2 * 768
    encoder = front + 12 * bert_layer(768, 3072)
    assert encoder == 94_371_712
    tables = (30522 + 512 + 2) * 768 + 2 * 768
    decoder = tables + 12 * bert_layer(768, 3072, cross=True) + 768 * 768 + 768 + 2 * 768 + 30522
    report = account(str(write_config({"model_type": "speech-encoder-decoder"})))
    assert report.total_params == encoder + decoder == 232_252_858


def test_the_synthetic_by_hand():
    # two biased convolutions of 16 (kernels 10 and 3), each with a LayerNorm (feat_extract_norm "layer"); the
    # projection 16 → 48; no masked_spec_embed (mask_time_prob 0); a position convolution of 16 taps in 4 groups;
    # 2 pre-LN layers of 48 (the same parameters as post-LN); enc_to_dec_proj 48 → 64
    front = (16 * 10 + 16 + 2 * 16) + (16 * 16 * 3 + 16 + 2 * 16) + 2 * 16 + (16 * 48 + 48) + (16 + 48 * 12 * 16 + 48)
    encoder = front + 2 * 48 + 2 * bert_layer(48, 64)
    tables = (1000 + 130 + 2) * 64 + 2 * 64
    decoder = tables + 3 * bert_layer(64, 96, cross=True) + 64 * 64 + 64 + 2 * 64 + 1000
    report = account(SYNTHETIC)
    assert report.outside_layers["other.enc_to_dec_proj"] == 48 * 64 + 64
    assert report.total_params == encoder + decoder + 48 * 64 + 64 == 262_296


def test_the_tensors_are_named_as_checkpoints_hold_them():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["encoder.feature_extractor.conv_layers.1.conv.weight"] == (16, 16, 3)
    assert tensors["encoder.feature_extractor.conv_layers.1.layer_norm.weight"] == (16,)
    assert tensors["encoder.encoder.pos_conv_embed.conv.parametrizations.weight.original1"] == (48, 12, 16)
    assert tensors["encoder.encoder.layers.1.feed_forward.intermediate_dense.weight"] == (64, 48)
    assert "encoder.masked_spec_embed" not in tensors
    assert tensors["enc_to_dec_proj.weight"] == (64, 48)


def test_a_generated_token_runs_the_decoder_only():
    # per token at context 64: the decoder's 3 layers (self-attention over 64 keys and cross-attention over the 64
    # positions that stand for the clip), each 2 · 64 (q · k and the values) × 2 FLOPs
    report = flops(SYNTHETIC, context=64)
    assert report.per_token.attention_scores == 3 * 2 * (2 * 2 * 64 * 64)


def test_the_prefill_equals_flop_counter_mode_but_the_convolutions_over_the_samples():
    # FlopCounterMode on 170 raw samples (33 positions after the first convolution, 16 after the second) and 16
    # target tokens (eager: every score computed). It also runs what reads the clip before the layers, which ffncalc
    # does not count: the two convolutions, the feature projection over 16 positions, and the position convolution
    # over 17 (16 taps padded by 8 a side; the 17th dropped after)
    report = flops(SYNTHETIC, COUNTED["tokens"], causal=False).prefill
    assert report.ffn == COUNTED["mlp"]
    assert report.lm_head == COUNTED["lm_head"]
    assert report.attention_projections + report.attention_scores == COUNTED["attention"] + COUNTED["cross_attention"]
    front = 2 * (16 * 10 * 33 + 16 * 16 * 3 * 16 + 16 * 48 * 16 + 48 * 12 * 16 * 17)
    assert report.total + front == COUNTED["total"]


def test_an_encoder_that_is_not_wav2vec2_is_refused(write_config):
    path = write_config({"model_type": "speech-encoder-decoder", "encoder": {"model_type": "hubert"}})
    with pytest.raises(InvalidConfigError, match=r"encoder\.model_type: 'hubert'"):
        account(str(path))


def test_an_adapter_is_refused(write_config):
    path = write_config(
        {"model_type": "speech-encoder-decoder", "encoder": {"model_type": "wav2vec2", "add_adapter": True}}
    )
    with pytest.raises(InvalidConfigError, match="add_adapter true"):
        account(str(path))
