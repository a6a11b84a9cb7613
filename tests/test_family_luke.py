"""LUKE: RoBERTa's encoder beside entity embeddings, with entity-aware queries that no word token runs.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_luke_defaults_by_hand(write_config):
    # LukeConfig(), LukeForMaskedLM: H 768, 12 layers, intermediate 3,072, vocabulary 50,267, 512 positions, 2 token
    # types; 500,000 entities 256 wide.
    hidden, ffn, vocab, entities, width = 768, 3072, 50267, 500_000, 256
    words = (vocab + 512 + 2) * hidden + 2 * hidden  # word, position, token-type tables, LayerNorm
    entity_side = entities * width + width * hidden + (512 + 2) * hidden + 2 * hidden  # table, dense, tables, LN
    bert_layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    queries = 3 * (hidden * hidden + hidden)  # w2e, e2w, e2e
    pooler = hidden * hidden + hidden
    lm_head = hidden * hidden + hidden + 2 * hidden + vocab * hidden + vocab  # dense, layer_norm, decoder, its bias
    entity_head = hidden * width + width + 2 * width + entities  # transform, LayerNorm, bias; the decoder tied
    total = words + entity_side + 12 * (bert_layer + queries) + pooler + lm_head + entity_head
    assert total == 314_445_435
    assert account(str(write_config({"model_type": "luke"}))).total_params == total


def test_entity_aware_queries_hold_parameters_no_word_token_runs():
    # synthetic__luke: H 64; per layer w2e, e2w and e2e queries of 64² + 64 each
    path = str(CONFIGS / "synthetic__luke.json")
    (layer,) = account(path).layers
    assert layer.components.attention == 7 * (64 * 64 + 64)  # q, k, v, output dense and the three queries
    # a word token runs q, k, v and the output dense only: 2 · 4 · 64², and the scores 2 · 4 heads · (16 + 16) per key
    per_token = flops(path, 10).per_token
    assert per_token.attention_projections == 2 * (2 * 4 * 64 * 64)
    assert per_token.attention_scores == 2 * 10 * 2 * 4 * (16 + 16)


def test_the_word_decoder_is_never_tied():
    # tie_word_embeddings (the default) ties the entity decoder only: lm_head keeps its decoder, 1,000 · 64 + 1,000
    report = account(str(CONFIGS / "synthetic__luke.json"))
    assert report.components.lm_head == 64 * 64 + 64 + 1000 * 64 + 1000


def test_untied_luke_stores_the_entity_decoder_and_the_head_bias():
    # tie_word_embeddings false: entity_predictions.decoder (300 × 64) and lm_head.bias (1,000) are their own;
    # entity_emb_size = hidden_size: no entity_embedding_dense; no entity-aware queries
    report = account(str(CONFIGS / "synthetic__luke_untied_plain_attention.json"))
    tied = account(str(CONFIGS / "synthetic__luke.json"))
    assert report.components.lm_head == tied.components.lm_head + 1000
    assert "other.luke.entity_embeddings.entity_embedding_dense" not in report.outside_layers
    assert report.outside_layers["other.entity_predictions.decoder.weight"] == 300 * 64
