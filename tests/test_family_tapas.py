"""TAPAS: BERT's encoder with seven token-type tables, and cell selection for table question answering.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_tapas_defaults_by_hand(write_config):
    # TapasConfig(), TapasForMaskedLM: BERT-base's layers (H 768, 12 layers, intermediate 3,072, every linear biased,
    # two LayerNorms); word (30,522), position (1,024) and token-type tables of 3 + 256 + 256 + 2 + 256 + 256 + 10
    # rows, and the embeddings' LayerNorm; the head's transform (dense, LayerNorm) and bias, the decoder tied.
    hidden, ffn, vocab = 768, 3072, 30522
    embeddings = (vocab + 1024 + (3 + 256 + 256 + 2 + 256 + 256 + 10)) * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    head = hidden * hidden + hidden + 2 * hidden + vocab
    total = embeddings + 12 * layer + head
    assert total == 110_703_930
    assert account(str(write_config({"model_type": "tapas"}))).total_params == total


def test_each_token_type_has_a_table_of_its_own():
    # type_vocab_sizes [3, 20, 20, 2, 20, 20, 10], 64 wide
    report = account(str(CONFIGS / "synthetic__tapas.json"))
    tables = {name: n for name, n in report.outside_layers.items() if "token_type_embeddings" in name}
    assert len(tables) == 7
    assert sum(tables.values()) == (3 + 20 + 20 + 2 + 20 + 20 + 10) * 64


def test_question_answering_selects_cells_with_two_vectors_and_aggregates_the_pooled_output():
    # output_weights and column_output_weights (64 each), output_bias and column_output_bias (1 each), the pooler
    # (64² + 64) and aggregation_classifier (64 · 4 + 4)
    report = account(str(CONFIGS / "synthetic__tapas_question_answering.json"))
    assert report.components.other == 2 * 64 + 2 + 64 * 64 + 64 + 64 * 4 + 4
    # every token is multiplied by both vectors: 2 · 64 FLOPs each; the pooler and the aggregation do not run per token
    assert flops(str(CONFIGS / "synthetic__tapas_question_answering.json"), 8).per_token.other == 2 * 2 * 64


def test_a_tapas_decoder_attends_to_an_encoder():
    # is_decoder and add_cross_attention: crossattention's q, k, v, output (4 · (64² + 64)) and its LayerNorm per layer
    (layer,) = account(str(CONFIGS / "synthetic__tapas_decoder_untied.json")).layers
    assert layer.components.cross_attention == 4 * (64 * 64 + 64)
    assert layer.parts["norm.crossattention.output.LayerNorm"] == 2 * 64
