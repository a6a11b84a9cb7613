"""SqueezeBERT: BERT's post-LN encoder with every linear map of its layers a grouped 1 × 1 convolution.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SMALL = str(CONFIGS / "synthetic__squeezebert.json")


def test_squeezebert_defaults_by_hand(write_config):
    # SqueezeBertConfig(), SqueezeBertForMaskedLM: V 30,522, H 768, 512 positions, 2 token types, a LayerNorm. 12 layers:
    # query, key, value in 4 groups (768 · 192 + 768 each), post_attention in 1 (768² + 768), intermediate 768 → 3,072
    # in 4 (3,072 · 192 + 3,072), output 3,072 → 768 in 4 (768 · 768 + 768), two LayerNorms. The pooler 768² + 768;
    # cls.predictions' transform 768² + 768 and its LayerNorm, the tied decoder's bias 30,522.
    vocab, hidden, ffn = 30522, 768, 3072
    layer = 3 * (hidden * hidden // 4 + hidden) + hidden * hidden + hidden + ffn * hidden // 4 + ffn
    layer += hidden * ffn // 4 + hidden + 2 * 2 * hidden
    total = (vocab + 512 + 2) * hidden + 2 * hidden + 12 * layer + 2 * (hidden * hidden + hidden) + 2 * hidden + vocab
    assert total == 51_712_314
    assert account(str(write_config({"model_type": "squeezebert"}))).total_params == total


def test_grouped_convolutions_are_stored_as_conv1d_weights():
    # H 64: q in 2 groups [64, 32, 1], v in 8 [64, 8, 1]; intermediate 64 → 96 in 2 [96, 32, 1]
    tensors = checkpoint_tensors(load_config(SMALL).spec)
    assert tensors["transformer.encoder.layers.0.attention.query.weight"] == (64, 32, 1)
    assert tensors["transformer.encoder.layers.0.attention.value.weight"] == (64, 8, 1)
    assert tensors["transformer.encoder.layers.1.post_attention.conv1d.weight"] == (64, 64, 1)
    assert tensors["transformer.encoder.layers.1.intermediate.conv1d.weight"] == (96, 32, 1)


def test_a_grouped_convolution_costs_a_groups_share_of_a_dense_one():
    # per token and layer, 2 · weights: q 64 · 32, k 64 · 16, v 64 · 8, post_attention 64 · 64; MLP 64 · 48 + 96 · 16
    report = flops(SMALL, 16).per_token
    assert report.attention_projections == 2 * 2 * (64 * 32 + 64 * 16 + 64 * 8 + 64 * 64) == 30_720
    assert report.ffn == 2 * 2 * (64 * 48 + 96 * 16) == 18_432


def test_every_squeezebert_class_holds_the_pooler():
    # synthetic__squeezebert_untied_token_classification: the pooler 64² + 64 and a classifier 64 → 5
    report = account(str(CONFIGS / "synthetic__squeezebert_untied_token_classification.json"))
    assert report.outside_layers["other.transformer.pooler.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier"] == 64 * 5 + 5


def test_groups_that_do_not_divide_a_width_are_refused_naming_the_field(write_config):
    config = {"model_type": "squeezebert", "hidden_size": 64, "num_attention_heads": 4, "embedding_size": 64}
    with pytest.raises(InvalidConfigError, match=r"intermediate_groups \(5\) does not divide hidden_size \(64\)"):
        account(str(write_config({**config, "intermediate_groups": 5})))


def test_embeddings_narrower_than_the_layers_are_refused(write_config):
    config = {"model_type": "squeezebert", "embedding_size": 128}
    with pytest.raises(InvalidConfigError, match=r"embedding_size \(128\) differs from hidden_size \(768\)"):
        account(str(write_config(config)))
