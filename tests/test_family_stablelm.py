"""Stability AI's StableLM: LayerNorms, optional q/k/v biases, a LayerNorm per query and key head, the parallel residual.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
STABLELM_3B = "stabilityai/stablelm-3b-4e1t"


def test_stablelm_3b_4e1t_by_hand():
    # H 2,560, 32 layers of 32 heads (no GQA), FFN 6,912, vocabulary 50,304, untied, no q/k/v biases.
    # A layer: q, k, v, o H² each, SwiGLU 3 · H · I, two LayerNorms (2H each). Outside: two tables and a LayerNorm.
    hidden, ffn, vocab = 2560, 6912, 50304
    layer = 4 * hidden * hidden + 3 * hidden * ffn + 2 * 2 * hidden
    assert account(STABLELM_3B).total_params == 32 * layer + 2 * vocab * hidden + 2 * hidden == 2_795_443_200


def test_stablelm_qk_layernorm_is_one_layernorm_per_head():
    # hidden 64 over 4 query heads of 16 and 2 KV heads: 4 norms of 16 for queries, 2 for keys, without biases.
    (layer,) = account(str(CONFIGS / "synthetic__stablelm.json")).layers
    assert layer.parts["norm.q_norm"] == 4 * 16
    assert layer.parts["norm.k_norm"] == 2 * 16


def test_stablelm_biases_q_k_and_v_but_never_o():
    (layer,) = account(str(CONFIGS / "synthetic__stablelm.json")).layers
    assert layer.parts["attention.q"] == 64 * 64 + 64
    assert layer.parts["attention.k"] == layer.parts["attention.v"] == 64 * 32 + 32
    assert layer.parts["attention.o"] == 64 * 64


def test_stablelm_parallel_residual_drops_the_post_attention_norm():
    (layer,) = account(str(CONFIGS / "synthetic__stablelm.json")).layers
    assert layer.parts["norm.input_layernorm"] == 2 * 64
    assert "norm.post_attention_layernorm" not in layer.parts
