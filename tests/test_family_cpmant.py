"""CPM-Ant: pre-norm layers with a GELU-gated FFN, a token table that also holds the prompt tokens, a segment table and
one table of position and segment-pair biases per head; a head of its own.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__cpmant.json, synthetic__cpmant.json).
"""

from ffncalc import account, flops

SMALL = {
    "model_type": "cpmant",
    "vocab_size": 300,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "dim_head": 20,
    "dim_ff": 96,
    "num_hidden_layers": 2,
    "position_bias_num_buckets": 16,
    "prompt_types": 2,
    "prompt_length": 3,
    "segment_types": 5,
}


def test_cpmant_default_model_by_hand(write_config):
    # CpmAntConfig(): H 4,096, 48 layers of 32 heads of 128 (q, k, v, out: 4 · H · 4,096), FFN 3 · H · 10,240, two
    # norms of H; input_embedding (30,720 + 32 · 32) × H, segment_embedding 32 × H, relative biases (32² + 512) × 32,
    # output_layernorm H, lm_head 30,720 × H (never tied)
    hidden, vocab = 4096, 30720
    layer = 4 * hidden * 4096 + 3 * hidden * 10240 + 2 * hidden
    embeddings = (vocab + 1024) * hidden + 32 * hidden + (1024 + 512) * 32
    report = account(str(write_config({"model_type": "cpmant"})))
    assert report.total_params == 48 * layer + embeddings + hidden + vocab * hidden == 9_517_453_312


def test_cpmant_head_has_the_vocabulary_rows_only(write_config):
    # the token table 306 rows (300 + 2 prompt types · 3), the head 300
    report = account(str(write_config(SMALL)))
    assert report.components.lm_head == 300 * 64
    assert report.components.embedding == 306 * 64 + 5 * 64
    assert report.total_params == 2 * (4 * 64 * 80 + 3 * 64 * 96 + 2 * 64) + 19904 + 41 * 4 + 64 + 19200 == 117_412


def test_cpmant_generated_token_runs_the_head_of_vocabulary_rows(write_config):
    report = flops(str(write_config(SMALL)), 1)
    assert report.per_token.lm_head == 2 * 300 * 64
