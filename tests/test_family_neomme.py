"""NeoMME: a bidirectional encoder of text and image patches with a factorised token table and head, gated attention
outputs, value embeddings and windows of two widths.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SMALL = str(CONFIGS / "synthetic__neomme.json")
UNTIED = str(CONFIGS / "synthetic__neomme_untied_biases.json")


def test_neomme_defaults_by_hand(write_config):
    # NeoMMEConfig(), NeoMMEForMaskedLM: token table 131,072 × 256, embedding_projection 256 → 1,024; value_embeddings
    # 131,072 × (4 · 64); patch_embeddings over 3 · 32² = 3,072 values: a LayerNorm (2 · 3,072), up_proj → 2,048, no
    # bias, down_proj → 1,024 with a bias. 17 layers: q 1,024 · 1,024, k and v 1,024 · 256, alpha 16, gate_proj and
    # o_proj 1,024 · 1,024 each, the MLP 2 · 1,024 · 3,584, lambdas 2; no norm holds a parameter. Head: tied.
    vocab, rank, hidden, patch = 131072, 256, 1024, 3 * 32 * 32
    embeddings = vocab * rank + rank * hidden + vocab * 4 * 64 + 2 * patch + patch * 2 * hidden + 2 * hidden * hidden
    layer = 3 * hidden * hidden + 2 * hidden * 256 + 16 + 2 * hidden * 3584 + 2
    total = embeddings + hidden + 17 * layer
    assert total == 262_937_906
    assert account(str(write_config({"model_type": "neomme"}))).total_params == total


def test_every_second_sliding_layer_reads_the_long_window():
    # 4 layers: sliding, sliding, sliding, full (the last); sliding_window 8 either side is 17 keys, the second sliding
    # layer 1,024 either side, 2,049 keys
    layers = load_config(SMALL).spec.layers
    assert [layer.attention.window for layer in layers] == [17, 2049, 17, None]


def test_a_given_per_layer_config_sets_the_windows_it_lists():
    # layer 0: 5 either side (11 keys); layer 1: null, every key; layer 2 unlisted: sliding_window 6 (13 keys)
    assert [layer.attention.window for layer in load_config(UNTIED).spec.layers] == [11, None, 13]


def test_the_gated_output_projection_counts_with_the_attention():
    # per token and layer: q 2 · 64 · 64, k and v 2 · 64 · 32, gate_proj and o_proj 2 · 64 · 64; 4 layers
    report = flops(SMALL, 16).per_token
    assert report.attention_projections == 4 * (3 * 2 * 64 * 64 + 2 * 2 * 64 * 32) == 131_072


def test_the_factorised_head_costs_both_its_matmuls_and_holds_no_parameter_when_tied():
    # per token: embedding_projection 2 · 32 · 64 and the tied unembedding_projection 2 · 64 · 32 (other); lm_head
    # 2 · 1,000 · 32
    report = flops(SMALL, 16).per_token
    assert (report.other, report.lm_head) == (2 * 2 * 32 * 64, 2 * 1000 * 32)
    assert account(SMALL).components.lm_head == 0


def test_untied_the_head_holds_its_unembedding_and_decoder():
    assert account(UNTIED).components.lm_head == 64 * 32 + 1000 * 32 == 34_048


def test_a_per_layer_config_naming_no_layer_is_refused(write_config):
    config = {"model_type": "neomme", "num_hidden_layers": 2, "per_layer_config": {"7": {"sliding_window": 4}}}
    with pytest.raises(InvalidConfigError, match=r"per_layer_config: '7' is not a layer index \(0 to 1\)"):
        account(str(write_config(config)))
