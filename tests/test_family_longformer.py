"""Longformer: RoBERTa's embeddings, post-LN layers and heads, with global q, k and v projections in every layer (held
as parameters, run only for global tokens, which ffncalc's figures have none of) and a two-sided window of
attention_window / 2 keys either side of each query, scored in overlapping chunks over the input padded to a multiple
of the largest window.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__longformer.json: 130,775,610,
LongformerForMaskedLM; synthetic__longformer.json: 117,312), and a forward pass of synthetic__longformer (16 tokens) to
FlopCounterMode by tests/test_flops.py (tools/flop_count.py --cpu: LongformerEncoder reads whether any token is global
with .item(), which the meta device cannot answer). Here the parts are derived by hand from the configs' numbers, and
the forward at two more lengths, one not a multiple of the window, is held to FlopCounterMode's figures.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__longformer.json")


def test_default_masked_lm_by_hand(write_config):
    # LongformerConfig(): vocabulary 30,522, hidden 768, 12 layers of 12 heads, MLP 3,072, 512 positions, two token
    # types, tied, attention_window 512. Embeddings: word, position and token-type tables and a LayerNorm. A layer: q, k,
    # v and their global copies (query_global, key_global, value_global), output dense, all with biases; the MLP with
    # biases; two LayerNorms. lm_head: dense, layer_norm, the decoder's bias (its weight is the word table).
    v, h, i = 30522, 768, 3072
    embeddings = v * h + 512 * h + 2 * h + 2 * h
    attention = 7 * (h * h + h)
    layer = attention + h * i + i + i * h + h + 4 * h
    head = h * h + h + 2 * h + v
    report = account(str(write_config({"model_type": "longformer"})))
    assert report.model_class == "LongformerForMaskedLM"
    assert report.total_params == embeddings + 12 * layer + head == 130_775_610
    assert report.components.attention == 12 * attention == 49_609_728


def chunked_scores(positions, windows, heads=4, head_dim=16):
    """The scores of one forward over POSITIONS (P, padded) by hand, from modeling_longformer.py:

    _sliding_chunks_query_key_matmul views each head's P queries and keys as P/w − 1 overlapping chunks of 2w (w =
    attention_window / 2, stride w) and multiplies each chunk's 2w queries by its 2w keys: einsum bcxd,bcyd->bcxy,
    2 · (P/w − 1) · 2w · 2w · d = 2 · 4w(P − w) · d FLOPs a head. _sliding_chunks_matmul_attn_probs_value pads the
    values by w at both ends and views them as P/w chunks of 3w (stride w), the probabilities as P/w chunks of w
    queries, each diagonalised to 3w columns: einsum bcwd,bcdh->bcwh, 2 · (P/w) · w · 3w · d = 2 · 3wP · d a head.
    The padding mask goes through _sliding_chunks_query_key_matmul too (diagonal_mask), with one head of width 1:
    torch contracts a width of 1 by multiplying, no matmul, so FlopCounterMode finds none."""
    total = 0
    for window in windows:
        w = window // 2
        qk = 2 * (positions // w - 1) * (2 * w) * (2 * w) * head_dim
        values = 2 * (positions // w) * w * (3 * w) * head_dim
        assert qk == 2 * 4 * w * (positions - w) * head_dim and values == 2 * 3 * w * positions * head_dim
        total += heads * (qk + values)
    return total


# synthetic__longformer: hidden 64, 4 heads of 16, MLP 96, 2 layers with attention_window [4, 8] (w = 2 and 4),
# vocabulary 320, tied. LongformerModel pads the input to a multiple of the largest window, 8; the layers run over the
# P padded positions and the head over the input's N tokens (the padding is dropped after the last layer). Per position:
# q, k, v, o 2 · 4 · 64² = 32,768 a layer; the MLP 2 · 2 · 64 · 96 = 24,576 a layer. Per token: lm_head.dense 2 · 64²
# = 8,192 (other), the decoder 2 · 64 · 320 = 40,960. FlopCounterMode's figures (tools/flop_count.py --cpu, transformers
# 5.24), its attention group being the projections and the scores.
@pytest.mark.parametrize(
    "tokens, positions, counted",
    [
        # N = 16 (a multiple of 8): tests/expected/flop_counter.json's synthetic__longformer
        (16, 16, {"total": 2_697_216, "attention": 1_124_352, "mlp": 786_432, "lm_head": 655_360}),
        # N = 13, padded to 16: the layers cost what 16 positions cost, the head 13 tokens
        (13, 16, {"total": 2_549_760, "attention": 1_124_352, "mlp": 786_432, "lm_head": 532_480}),
        # N = 40 (a multiple of 8, and past both windows)
        (40, 40, {"total": 6_758_400, "attention": 2_826_240, "mlp": 1_966_080, "lm_head": 1_638_400}),
    ],
)
def test_forward_is_the_chunked_window_over_the_padded_input(tokens, positions, counted):
    scores = chunked_scores(positions, [4, 8])
    projections = positions * 2 * 32_768
    mlp = positions * 2 * 24_576
    head, dense = tokens * 40_960, tokens * 8_192
    assert projections + scores == counted["attention"]
    assert mlp == counted["mlp"] and head == counted["lm_head"]
    assert projections + scores + mlp + head + dense == counted["total"]
    report = flops(SYNTHETIC, tokens, causal=False).prefill
    assert report.attention_scores == scores
    assert report.attention_projections == projections
    assert report.ffn == mlp
    assert report.lm_head == head
    assert report.other == dense
    assert report.total == counted["total"]


def test_one_window_for_every_layer(write_config):
    # attention_window 8 for both layers (w = 4), 16 tokens: each layer 4 heads · (2 · 4 · 4 · 12 + 2 · 3 · 4 · 16) · 16
    config = write_config(
        {
            "model_type": "longformer",
            "hidden_size": 64,
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "attention_window": 8,
        }
    )
    report = flops(str(config), 16, causal=False).prefill
    assert report.attention_scores == chunked_scores(16, [8, 8]) == 2 * 4 * (2 * 4 * 4 * 12 + 2 * 3 * 4 * 16) * 16


@pytest.mark.parametrize(
    "window, match",
    [
        ([4, 8, 8], "2 layers"),
        (6, None),
        ([6, 12], None),
        ([3, 8], "odd"),
        ([4, 6], "does not divide"),
    ],
)
def test_windows_are_checked_as_transformers_asserts_them(write_config, window, match):
    config = write_config({"model_type": "longformer", "num_hidden_layers": 2, "attention_window": window})
    if match is None:
        assert account(str(config)).total_params > 0
        return
    with pytest.raises(InvalidConfigError, match=match):
        account(str(config))
