"""MobileBERT: layers inside a bottleneck, several FFNs a layer, and a head that multiplies by the word table and a
dense weight concatenated.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand, and a forward pass's FLOPs are held to FlopCounterMode group by group.
"""

import json

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SMALL = str(CONFIGS / "synthetic__mobilebert.json")
COUNTER = json.loads((ROOT / "tests" / "expected" / "flop_counter.json").read_text())["counts"]


def test_mobilebert_defaults_by_hand(write_config):
    # MobileBertConfig(), MobileBertForMaskedLM: V 30,522, word table E 128 wide; positions (512) and token types (2)
    # H 512 wide; embedding_transformation 3 · 128 → 512 biased (trigram_input); a NoNorm (weight and bias). 24 layers
    # inside B 128: query and key B → B, value H → B, output dense B → B, all biased; 4 FFNs B ↔ 512 biased, each
    # with a norm of B (the last one's is output.LayerNorm), attention.output's norm; bottleneck.input and
    # bottleneck.attention H → B biased with norms of B, output.bottleneck B → H biased with a norm of H. Head: the
    # transform H² + H and its LayerNorm, cls.predictions.dense V · (H − E), the tied decoder's bias V.
    vocab, hidden, width, inner, ffn = 30522, 512, 128, 128, 512
    embeddings = vocab * width + (512 + 2) * hidden + 3 * width * hidden + hidden + 2 * hidden
    attention = 3 * (inner * inner + inner) + hidden * inner + inner + 2 * inner
    ffns = 4 * (inner * ffn + ffn + ffn * inner + inner + 2 * inner)
    bottlenecks = 2 * (hidden * inner + inner + 2 * inner) + inner * hidden + hidden + 2 * hidden
    head = hidden * hidden + hidden + 2 * hidden + vocab * (hidden - width) + vocab
    total = embeddings + 24 * (attention + ffns + bottlenecks) + head
    assert total == 36_596_538
    assert account(str(write_config({"model_type": "mobilebert"}))).total_params == total


def test_values_read_the_hidden_state_query_and_key_its_bottleneck():
    # synthetic__mobilebert: H 64, B 32 (4 heads of 8)
    tensors = checkpoint_tensors(load_config(SMALL).spec)
    assert tensors["mobilebert.encoder.layer.0.attention.self.query.weight"] == (32, 32)
    assert tensors["mobilebert.encoder.layer.0.attention.self.key.weight"] == (32, 32)
    assert tensors["mobilebert.encoder.layer.0.attention.self.value.weight"] == (32, 64)


def test_with_bottleneck_attention_all_three_read_the_bottleneck_and_the_shared_one_only_holds_parameters():
    # synthetic__mobilebert_pretraining_untied: use_bottleneck_attention; bottleneck.attention is built, never run
    path = str(CONFIGS / "synthetic__mobilebert_pretraining_untied.json")
    tensors = checkpoint_tensors(load_config(path).spec)
    assert tensors["mobilebert.encoder.layer.0.attention.self.value.weight"] == (32, 32)
    assert tensors["mobilebert.encoder.layer.0.bottleneck.attention.dense.weight"] == (32, 64)
    # per token and layer: q, k, v, o 2 · 32² each, and bottleneck.input and output.bottleneck 2 · 64 · 32 each
    report = flops(path, 16).per_token
    assert report.attention_projections == 2 * 4 * 2 * 32 * 32 == 16_384


def test_every_feedforward_network_of_a_layer_counts_with_the_ffn():
    # num_feedforward_networks 3, each B 32 ↔ 48 biased, 2 layers
    assert account(SMALL).components.ffn == 2 * 3 * (32 * 48 + 48 + 48 * 32 + 32) == 18_912


def test_the_head_multiplies_by_the_tied_table_and_its_dense_weight():
    # parameters: cls.predictions.dense V · (H − E) = 1,000 · 48, the transform 64² + 64, the decoder's bias 1,000
    assert account(SMALL).components.lm_head == 1000 * 48 + 64 * 64 + 64 + 1000 == 53_160
    # FLOPs a token: the tied table's rows 2 · 1,000 · 16 as the head; the dense rows 2 · 1,000 · 48 with the other
    # model-level matmuls, beside embedding_transformation 2 · 48 · 64, the transform 2 · 64², and the bottlenecks
    # 3 · 2 · 64 · 32 per layer
    report = flops(SMALL, 16).per_token
    assert report.lm_head == 2 * 1000 * 16 == 32_000
    assert report.other == 2 * 1000 * 48 + 2 * 48 * 64 + 2 * 64 * 64 + 2 * 3 * 2 * 64 * 32 == 134_912


def test_forward_flops_match_flop_counter_mode_group_by_group():
    # FlopCounterMode, 16 tokens (tools/flop_count.py): the head's matmul runs inside cls.predictions, not in the
    # decoder module, so its lm_head group is 0; its mlp group holds each layer's last FFN and output.bottleneck, not
    # the FFNs of ffn.{j} (deeper than it groups); the attention group is q, k, v, o and the scores.
    counted = COUNTER["synthetic__mobilebert"]
    report = flops(SMALL, 16, causal=False).prefill
    last_ffn, output_bottleneck, earlier_ffns = 2 * 2 * 32 * 48, 2 * 32 * 64, 2 * 2 * 2 * 32 * 48
    assert counted["lm_head"] == 0
    assert counted["mlp"] == 16 * 2 * (last_ffn + output_bottleneck)
    assert report.ffn == 16 * 2 * (last_ffn + earlier_ffns)
    assert report.attention_projections + report.attention_scores == counted["attention"]
    assert report.total == counted["total"] == 3_653_632


def test_a_pooler_without_classifier_activation_holds_nothing():
    # classifier_activation false: the pooler takes the first token as it is; the classifier 64 → 3
    report = account(str(CONFIGS / "synthetic__mobilebert_no_bottleneck_classification.json"))
    assert "other.mobilebert.pooler.dense" not in report.outside_layers
    assert report.outside_layers["other.classifier"] == 64 * 3 + 3


def test_query_and_key_reading_the_hidden_state_through_a_bottleneck_are_refused(write_config):
    config = {"model_type": "mobilebert", "key_query_shared_bottleneck": False}
    with pytest.raises(InvalidConfigError, match=r"query and key read the hidden state \(512\) through layers 128"):
        account(str(write_config(config)))


def test_a_word_table_wider_than_the_hidden_state_is_refused_for_the_masked_lm(write_config):
    config = {"model_type": "mobilebert", "embedding_size": 640}
    with pytest.raises(InvalidConfigError, match=r"embedding_size \(640\) exceeds hidden_size \(512\)"):
        account(str(write_config(config)))
