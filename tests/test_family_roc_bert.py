"""RoCBert (roc_bert): BERT's layers with pronunciation and glyph-shape tables mapped into each token's embedding.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults), its FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived
by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_roc_bert_defaults_by_hand(write_config):
    # RoCBertConfig(): BERT-base (vocabulary 30,522, 512 positions, 2 token types) as RoCBertForMaskedLM, with a
    # pronunciation table 910 × 768, a shape table 24,858 × 512 and map_inputs_layer (768 + 768 + 512 → 768, biased)
    hidden, ffn = 768, 3072
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    tables = (30522 + 512 + 2) * hidden + 910 * 768 + 24858 * 512 + 2 * hidden
    mapped = (768 + 768 + 512) * hidden + hidden
    head = hidden * hidden + hidden + 2 * hidden + 30522  # the transform, its LayerNorm, the tied decoder's bias
    total = tables + mapped + 12 * layer + head
    assert total == 124_514_106  # transformers 5.24 builds RoCBertForMaskedLM() so
    assert account(str(write_config({"model_type": "roc_bert"}))).total_params == total


def test_roc_bert_maps_the_concatenated_tables_back_to_hidden():
    # word 64 + pronunciation 24 + shape 16 → 64, with its bias
    report = account(str(CONFIGS / "synthetic__roc_bert.json"))
    assert report.outside_layers["embedding.roc_bert.embeddings.map_inputs_layer"] == (64 + 24 + 16) * 64 + 64


def test_a_disabled_table_is_still_built_but_not_mapped():
    # enable_shape false: the shape table 70 × 16 stays; map_inputs_layer reads word 64 + pronunciation 24
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__roc_bert_decoder_untied.json")).spec)
    assert tensors["roc_bert.embeddings.shape_embed.weight"] == (70, 16)
    assert tensors["roc_bert.embeddings.map_inputs_layer.weight"] == (64, 64 + 24)


def test_without_concat_input_there_is_no_map_inputs_layer():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__roc_bert_no_concat.json")).spec)
    assert not any("map_inputs_layer" in name for name in tensors)
    assert tensors["classifier.weight"] == (3, 64)  # three labels from id2label


def test_roc_bert_pre_training_has_a_pooler_and_no_next_sentence_head():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__roc_bert.json")).spec)
    assert tensors["roc_bert.pooler.dense.weight"] == (64, 64)
    assert not any("seq_relationship" in name for name in tensors)


def test_a_padding_row_past_the_pronunciation_table_is_refused(write_config):
    config = {"model_type": "roc_bert", "pad_token_id": 1000, "vocab_size": 2000}
    with pytest.raises(InvalidConfigError, match=r"pronunciation_vocab_size \(910\) has no row pad_token_id \(1000\)"):
        account(str(write_config(config)))
