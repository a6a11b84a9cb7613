"""RemBERT: BERT's layers between narrow input tables and a wide head of its own.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, its FLOPs to
FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__rembert.json")


def test_rembert_defaults_by_hand(write_config):
    # RemBertConfig(), RemBertForMaskedLM: tables 256 wide (250,300 words, 512 positions, 2 token types) and their
    # LayerNorm; encoder.embedding_hidden_mapping_in 256 → 1,152 with its bias; 32 post-LN layers (q, k, v, o with
    # biases, MLP 4,608 with biases, two LayerNorms); the head: dense 1,152 → 1,664, LayerNorm, decoder 1,664 → vocab
    # with its bias, untied.
    vocab, width, hidden, ffn, out = 250300, 256, 1152, 4608, 1664
    embeddings = (vocab + 512 + 2) * width + 2 * width + width * hidden + hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    head = hidden * out + out + 2 * out + out * vocab + vocab
    assert embeddings + 32 * layer + head == 993_263_548
    assert account(str(write_config({"model_type": "rembert"}))).total_params == 993_263_548


def test_rembert_head_reads_output_embedding_size_not_the_table_width():
    # the decoder multiplies each token's 48 values by vocab 1,000 rows: 2 · 48 · 1,000 FLOPs (the tables are 32 wide)
    assert flops(SYNTHETIC, 1).per_token.lm_head == 2 * 48 * 1000


def test_rembert_ties_nothing_whatever_the_config_says(write_config):
    # tie_word_embeddings true changes nothing: RemBERT declares no tied weights, so the decoder (48 · 1,000 + 1,000)
    # is counted beside the word table (1,000 · 32)
    config = {
        "model_type": "rembert",
        "vocab_size": 1000,
        "hidden_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "intermediate_size": 96,
        "input_embedding_size": 32,
        "output_embedding_size": 48,
        "tie_word_embeddings": True,
    }
    report = account(str(write_config(config)))
    assert report.components.lm_head == 64 * 48 + 48 + 48 * 1000 + 1000
