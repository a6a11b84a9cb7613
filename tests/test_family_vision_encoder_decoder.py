"""VisionEncoderDecoderModel (vision-encoder-decoder): a ViT image encoder and a decoder of BERT's lineage with
cross-attention, composed as EncoderDecoderModel's.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py
(tests/expected/transformers/defaults__vision-encoder-decoder.json: 224,270,394; synthetic__vision_encoder_decoder.json:
432,328); the FLOPs to FlopCounterMode on a forward of one image and 16 target tokens (tests/expected/flop_counter.json,
tools/flop_count.py); here each expected figure is also derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__vision_encoder_decoder.json")
COUNTED = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__vision_encoder_decoder"]


def bert_layer(h: int, ffn: int, cross: bool = False) -> int:
    """q, k, v, o h² + h each, the MLP with its biases, two LayerNorms; cross-attention four more and a LayerNorm."""
    own = 4 * (h * h + h) + 2 * h * ffn + ffn + h + 2 * 2 * h
    return own + (4 * (h * h + h) + 2 * h if cross else 0)


def vit(h: int, layers: int, ffn: int, image: int, patch: int) -> int:
    """ViTModel: layers as BERT's (q, k, v biased), a class token, a position per patch and for it, the biased patch
    convolution, the final LayerNorm and the pooler."""
    positions = (image // patch) ** 2 + 1
    embeddings = h + positions * h + 3 * patch * patch * h + h
    return embeddings + layers * bert_layer(h, ffn) + 2 * h + h * h + h


def test_the_default_is_vit_to_bert_by_hand(write_config):
    # VisionEncoderDecoderConfig(): ViTModel (224 px, patches of 16, 12 layers of 768) and BertLMHeadModel with
    # is_decoder and add_cross_attention; both 768 wide, so no enc_to_dec_proj
    encoder = vit(768, 12, 3072, 224, 16)
    assert encoder == 86_389_248  # google/vit-base-patch16-224-in21k's ViTModel
    tables = (30522 + 512 + 2) * 768 + 2 * 768
    decoder = tables + 12 * bert_layer(768, 3072, cross=True) + 768 * 768 + 768 + 2 * 768 + 30522
    report = account(str(write_config({"model_type": "vision-encoder-decoder"})))
    assert report.total_params == encoder + decoder == 224_270_394


def test_the_synthetic_by_hand():
    # a 64 px image in patches of 16: 16 patches and the class token; ViT 96 wide, BERT 64 wide: enc_to_dec_proj
    encoder = vit(96, 2, 128, 64, 16)
    tables = (1000 + 130 + 2) * 64 + 2 * 64
    # the decoder's cross-attention reads the projected, 64-wide positions
    decoder = tables + 3 * bert_layer(64, 96, cross=True) + 64 * 64 + 64 + 2 * 64 + 1000  # and its head
    report = account(SYNTHETIC)
    assert report.outside_layers["other.enc_to_dec_proj"] == 96 * 64 + 64
    assert report.total_params == encoder + decoder + 96 * 64 + 64 == 432_328


def test_the_tensors_are_named_as_checkpoints_hold_them():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["encoder.encoder.layer.1.attention.attention.query.weight"] == (96, 96)
    assert tensors["encoder.embeddings.position_embeddings"] == (1, 17, 96)
    assert tensors["encoder.embeddings.patch_embeddings.projection.weight"] == (96, 3, 16, 16)
    assert tensors["encoder.pooler.dense.weight"] == (96, 96)
    assert tensors["decoder.bert.encoder.layer.2.crossattention.self.key.weight"] == (64, 64)  # after enc_to_dec_proj
    assert tensors["enc_to_dec_proj.weight"] == (64, 96)


def test_a_generated_token_cross_attends_to_the_images_positions_whatever_the_context():
    # per token at context 64: self-attention over 64 keys and cross-attention over 17 positions, 3 layers, each
    # 2 · 64 (q · k and the values) × 2 FLOPs; the encoder does not run
    for context in (64, 1024):
        report = flops(SYNTHETIC, context=context)
        assert report.per_token.attention_scores == 3 * (2 * 2 * 64 * context + 2 * 2 * 64 * 17)


def test_the_prefill_equals_flop_counter_mode():
    # FlopCounterMode on one 64 px image and 16 target tokens (eager: every score computed); it also runs the pooler
    # once on the class token (2 · 96 · 96), which ffncalc counts in no forward
    report = flops(SYNTHETIC, COUNTED["tokens"], causal=False).prefill
    assert report.ffn == COUNTED["mlp"]
    assert report.lm_head == COUNTED["lm_head"]
    assert report.attention_projections + report.attention_scores == COUNTED["attention"] + COUNTED["cross_attention"]
    assert report.total + 2 * 96 * 96 == COUNTED["total"]


def test_the_patch_convolution_runs_per_patch_not_for_the_class_token():
    # other: the patch convolution over 16 patches, enc_to_dec_proj over 17 positions, the head's transform per token
    report = flops(SYNTHETIC, 16, causal=False).prefill
    assert report.other == 2 * (16 * 3 * 16 * 16 * 96 + 17 * 96 * 64 + 16 * 64 * 64)


def test_an_encoder_that_is_not_vit_is_refused(write_config):
    path = write_config({"model_type": "vision-encoder-decoder", "encoder": {"model_type": "swin"}})
    with pytest.raises(InvalidConfigError, match=r"encoder\.model_type: 'swin'"):
        account(str(path))
