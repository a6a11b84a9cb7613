"""EncoderDecoderModel (encoder-decoder): an encoder and a decoder of BERT's lineage, each read by its own family.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
BERT_TO_BERT = str(CONFIGS / "synthetic__encoder_decoder.json")
ROBERTA_TO_ELECTRA = str(CONFIGS / "synthetic__encoder_decoder_roberta_electra.json")


def bert_layer(h: int, ffn: int, cross: bool = False) -> int:
    """q, k, v, o h² + h each, the MLP with its biases, two LayerNorms; cross-attention four more and a LayerNorm."""
    own = 4 * (h * h + h) + 2 * h * ffn + ffn + h + 2 * 2 * h
    return own + (4 * (h * h + h) + 2 * h if cross else 0)


def test_encoder_decoder_defaults_are_bert_to_bert(write_config):
    # EncoderDecoderConfig(): BertModel (its pooler) and BertLMHeadModel with is_decoder and add_cross_attention
    h, tables = 768, (30522 + 512 + 2) * 768 + 2 * 768
    encoder = tables + 12 * bert_layer(h, 3072) + h * h + h
    assert encoder == 109_482_240  # bert-base-uncased's BertModel
    decoder = tables + 12 * bert_layer(h, 3072, cross=True) + h * h + h + 2 * h + 30522
    assert encoder + decoder == 247_363_386  # transformers 5.24 builds EncoderDecoderModel() so
    assert account(str(write_config({"model_type": "encoder-decoder"}))).total_params == encoder + decoder


def test_each_stack_keeps_its_own_tables_and_the_decoder_its_head():
    tensors = checkpoint_tensors(load_config(BERT_TO_BERT).spec)
    assert tensors["encoder.embeddings.word_embeddings.weight"] == (1000, 64)
    assert tensors["encoder.pooler.dense.weight"] == (64, 64)  # AutoModel's BertModel builds its pooler
    assert tensors["decoder.bert.embeddings.word_embeddings.weight"] == (1000, 64)
    assert tensors["decoder.bert.encoder.layer.2.crossattention.self.key.weight"] == (64, 64)
    assert tensors["decoder.cls.predictions.bias"] == (1000,)
    assert "decoder.cls.predictions.decoder.weight" not in tensors  # tied to the decoder's word table


def test_bert_to_bert_by_hand():
    h, tables = 64, (1000 + 130 + 2) * 64 + 2 * 64
    encoder = tables + 2 * bert_layer(h, 96) + h * h + h
    decoder = tables + 3 * bert_layer(h, 96, cross=True) + h * h + h + 2 * h + 1000
    assert account(BERT_TO_BERT).total_params == encoder + decoder == 351_624


def test_different_widths_add_enc_to_dec_proj():
    # RoBERTa's 96-wide output mapped to ELECTRA's 64, biased
    report = account(ROBERTA_TO_ELECTRA)
    assert report.outside_layers["other.enc_to_dec_proj"] == 96 * 64 + 64


def test_a_generated_token_runs_the_decoder_only():
    # ELECTRA decoder, 2 layers of 64: q k v o 4 · 64², cross q and o 2 · 64², MLP 2 · 64 · 96; the generator's
    # head 700 × 32, its transform 64 → 32 and embeddings_project 32 → 64; 2 FLOPs per multiply-add; scores
    # 2 · 4 heads · (16 + 16) per key, over 32 keys of its own and 32 encoder positions, in each layer
    weights = 2 * (6 * 64 * 64 + 2 * 64 * 96) + 700 * 32 + 64 * 32 + 32 * 64
    scores = 2 * 2 * 4 * (16 + 16) * (32 + 32)
    assert flops(ROBERTA_TO_ELECTRA, 32).per_token.total == 2 * weights + scores


def test_the_prefill_runs_the_encoder_and_enc_to_dec_proj_once_per_input_token():
    # RoBERTa encoder, 2 layers of 96 (4 heads of 24, MLP 128), each of 32 positions attending to all 32; per
    # position also the decoder layers' cross k and v (2 · 2 · 64²) and enc_to_dec_proj (96 × 64)
    encoder_weights = 2 * (4 * 96 * 96 + 2 * 96 * 128) + 2 * 2 * 64 * 64 + 96 * 64
    encoder = 32 * (2 * encoder_weights + 2 * 2 * 4 * (24 + 24) * 32)
    # the decoder over 32 target tokens: token i attends to i keys of its own (528 in all) and to all 32 positions
    decoder_weights = 2 * (6 * 64 * 64 + 2 * 64 * 96) + 700 * 32 + 64 * 32 + 32 * 64
    decoder = 32 * 2 * decoder_weights + 2 * 2 * 4 * (16 + 16) * (528 + 32 * 32)
    assert flops(ROBERTA_TO_ELECTRA, 32).prefill.total == encoder + decoder


def test_an_encoder_of_another_lineage_is_refused(write_config):
    config = {"model_type": "encoder-decoder", "encoder": {"model_type": "llama"}}
    with pytest.raises(InvalidConfigError, match=r"encoder.model_type: 'llama' is not one ffncalc composes"):
        account(str(write_config(config)))


def test_a_decoder_family_without_a_causal_lm_is_refused(write_config):
    config = {"model_type": "encoder-decoder", "decoder": {"model_type": "layoutlm"}}
    with pytest.raises(InvalidConfigError, match=r"decoder\.model_type: LayoutLM has no causal LM class"):
        account(str(write_config(config)))
