"""LongT5: T5's stacks and tied head, whose encoder attends locally (encoder_attention_type "local", the default): a
query reads the keys within local_radius of it, scored in blocks of local_radius + 1 against its own block and the two
beside it, over the input padded to whole blocks; with "transient-global" every query also reads one summary of every
global_block_size tokens.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__longt5.json: 60,506,624,
LongT5ForConditionalGeneration; synthetic__longt5.json: 193,344; synthetic__longt5_tglobal.json: 193,504). The forwards
of synthetic__longt5 and synthetic__longt5_tglobal are held here, group by group, to FlopCounterMode (tools/flop_count.py
on the meta device; the decoder's cross-attention, EncDecAttention, a group of its own, which ffncalc counts in the
attention): 16 tokens as tests/expected/flop_counter.json records them, 13 (padded to 16 in the encoder's blocks) and
40, and for transient-global 2 (no whole group: no summary).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__longt5.json")


def test_default_seq2seq_lm_by_hand(write_config):
    # LongT5Config(): vocabulary 32,128, d_model 512, 8 heads of d_kv 64, d_ff 2,048 ("relu": wi → wo), 6 encoder and 6
    # decoder blocks, 32 relative-position buckets; the head is shared (tied). An encoder block: LocalSelfAttention's q,
    # k, v, o (no biases), two RMS norms, wi and wo; a decoder block: SelfAttention and EncDecAttention (q, k, v, o
    # each), three RMS norms, wi and wo. Each stack's first block holds a relative_attention_bias (32 × 8) and each
    # stack ends in final_layer_norm.
    v, d, f = 32128, 512, 2048
    attention = 4 * d * d
    encoder = attention + 2 * d * f + 2 * d
    decoder = 2 * attention + 2 * d * f + 3 * d
    report = account(str(write_config({"model_type": "longt5"})))
    assert report.model_class == "LongT5ForConditionalGeneration"
    assert report.total_params == v * d + 6 * encoder + 6 * decoder + 2 * (32 * 8 + d) == 60_506_624
    assert report.components.cross_attention == 6 * attention


def encoder_scores(positions):
    """synthetic__longt5's encoder scores, one layer, by hand from modeling_longt5.py's LongT5LocalAttention: local_radius
    3, so block_len = 4. q, k and v (projected over the input's N tokens) are split into blocks of 4, padded with zeros
    to P_b, a multiple of 4 (_split_into_blocks); the keys and values of each block are its own and the two beside it,
    zeros past either end (_concatenate_3_blocks: 3 · 4 = 12). The scores, einsum ...qhd,...khd->...hqk: P_b / 4 blocks
    × 4 heads × 4 queries × 12 keys × 16 dimensions, 2 FLOPs each: 2 · 16 · 12 · 4 · (P_b / 4) = 384 · P_b a head; the
    values, einsum ...hqk,...khd->...qhd, the same. The window (|distance| < 4) and the padding are masked after, with
    no matmul. 4 heads · 2 · 384 · P_b = 3,072 · P_b."""
    per_head = 2 * 16 * 12 * 4 * (positions // 4)
    assert per_head == 384 * positions
    return 4 * 2 * per_head


# synthetic__longt5: d_model 64, 4 heads of d_kv 16 (inner 64), "gated-gelu" (wi_0, wi_1 → wo, d_ff 96), 2 encoder and 2
# decoder blocks, vocabulary 320, tied. N input tokens and N target tokens (the decoder's self-attention eager: all
# N × N scores, masked after). Per token and layer: q, k, v, o 2 · 4 · 64² = 32,768; the FFN 2 · 3 · 64 · 96 = 36,864.
# The head 2 · 64 · 320 = 40,960 a token. The encoder's projections, FFN and output are N tokens long (LongT5LocalAttention
# cuts its output back to N before o); only its scores run over P_b, N padded to a multiple of 4.
@pytest.mark.parametrize("tokens, positions", [(16, 16), (13, 16), (40, 40)])
def test_forward_by_hand_and_as_flop_counter_mode_counts_it(tokens, positions):
    n, p = tokens, positions
    encoder_attention = 2 * (n * 32_768 + encoder_scores(p))
    decoder_attention = 2 * (n * 32_768 + 2 * 2 * 4 * 16 * n * n)  # QK and AV, 2 · 4 heads · 16 · N² each
    cross = 2 * (n * 16_384 + n * 16_384 + 2 * 2 * 4 * 16 * n * n)  # q and o; k and v of N encoder positions; scores
    mlp = 4 * n * 36_864
    head = n * 40_960
    counted = {
        # FlopCounterMode, tools/flop_count.py (meta), transformers 5.24 (16: tests/expected/flop_counter.json)
        16: {"total": 6_520_832, "attention": 2_326_528, "cross_attention": 1_179_648, "mlp": 2_359_296},
        13: {"total": 5_276_672, "attention": 1_888_768, "cross_attention": 938_496, "mlp": 1_916_928},
        40: {"total": 17_285_120, "attention": 6_307_840, "cross_attention": 3_440_640, "mlp": 5_898_240},
    }[n]
    assert encoder_attention + decoder_attention == counted["attention"]
    assert cross == counted["cross_attention"] and mlp == counted["mlp"]
    assert encoder_attention + decoder_attention + cross + mlp + head == counted["total"]
    report = flops(SYNTHETIC, n, causal=False).prefill
    assert report.attention_projections == 2 * n * 32_768 + 2 * n * 32_768 + 2 * n * 32_768
    assert report.attention_scores == 2 * encoder_scores(p) + 2 * 2 * (2 * 2 * 4 * 16 * n * n)
    assert report.ffn == mlp and report.lm_head == head
    assert report.total == counted["total"]


def test_the_recorded_forward_is_the_one_held_here():
    recorded = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__longt5"]
    assert (recorded["tokens"], recorded["total"], recorded["cross_attention"]) == (16, 6_520_832, 1_179_648)
    recorded = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__longt5_tglobal"]
    assert (recorded["tokens"], recorded["total"], recorded["attention"]) == (16, 6_746_112, 1_372_160 + 1_179_648)


def test_an_input_shorter_than_a_block_pays_for_a_whole_block(write_config):
    # local_radius 7 (block_len 8), 3 tokens: P_b = 8, each layer 4 heads · 2 · (2 · 16 · 24 · 8) = 49,152 however few
    # of the 8 positions are tokens
    config = json.loads((ROOT / "tests" / "configs" / "synthetic__longt5.json").read_text())
    path = write_config({**config, "local_radius": 7, "num_decoder_layers": 1})
    encoder = flops(str(path), 3, causal=False).prefill.attention_scores - 2 * (2 * 2 * 4 * 16 * 3 * 3)
    assert encoder == 2 * 4 * 2 * (2 * 16 * 24 * 8) == 2 * 49_152


def test_another_encoder_attention_type_is_refused(write_config):
    config = write_config({"model_type": "longt5", "encoder_attention_type": "sparse"})
    with pytest.raises(InvalidConfigError, match="encoder_attention_type: 'sparse' is neither"):
        account(str(config))


TGLOBAL = str(ROOT / "tests" / "configs" / "synthetic__longt5_tglobal.json")


def test_transient_global_parameters_by_hand():
    # synthetic__longt5 with encoder_attention_type "transient-global": each encoder block's TransientGlobalSelfAttention
    # also holds global_input_layer_norm (64), and the first block global_relative_attention_bias (8 buckets × 4 heads)
    report = account(TGLOBAL)
    assert report.total_params == 193_344 + 2 * 64 + 8 * 4 == 193_504
    assert report.components.attention == account(SYNTHETIC).components.attention + 8 * 4


def summary_costs(tokens, positions):
    """What the summaries add to one transient-global layer of synthetic__longt5_tglobal (global_block_size 3), by hand
    from modeling_longt5.py's LongT5TransientGlobalAttention: S = N // 3 summaries (_make_global_fixed_block_ids;
    the tokens past the last whole group join it). _create_global_aggregates sums each group's inputs with a one-hot
    einsum, ...nd,...ng->...gd: 2 · N · S · 64. global_input_layer_norm (no matmul), then k and v project the S
    summaries: 2 · 2 · 64² · S. Each block's 4 queries read its 12 keys and the S summaries (repeated into every block):
    4 heads · 2 · 2 · 16 · (P_b / 4) · 4 · S = 256 · P_b · S more for QK and the values."""
    summaries = tokens // 3
    making = 2 * tokens * summaries * 64
    projections = 2 * 2 * 64 * 64 * summaries
    scores = 4 * 2 * 2 * 16 * (positions // 4) * 4 * summaries
    assert scores == 256 * positions * summaries
    return making, projections, scores


@pytest.mark.parametrize(
    "tokens, positions, counted",
    [
        # FlopCounterMode, tools/flop_count.py (meta), transformers 5.24 (16: tests/expected/flop_counter.json):
        # the total and the encoder's TransientGlobalSelfAttention groups
        (16, 16, {"total": 6_746_112, "encoder_attention": 1_372_160}),
        (13, 16, {"total": 5_453_824, "encoder_attention": 1_127_424}),
        (40, 40, {"total": 18_110_464, "encoder_attention": 3_692_544}),
        (2, 4, {"total": 798_720, "encoder_attention": 155_648}),
    ],
)
def test_transient_global_forward_by_hand_and_as_flop_counter_mode_counts_it(tokens, positions, counted):
    n, p = tokens, positions
    making, summary_projections, summary_scores = summary_costs(n, p)
    encoder_attention = 2 * (n * 32_768 + summary_projections + encoder_scores(p) + summary_scores + making)
    assert encoder_attention == counted["encoder_attention"]
    local = flops(SYNTHETIC, n, causal=False).prefill
    report = flops(TGLOBAL, n, causal=False).prefill
    # the rest of the forward is synthetic__longt5's
    assert report.total - local.total == encoder_attention - 2 * (n * 32_768 + encoder_scores(p))
    assert report.total == counted["total"]
    assert report.attention_projections == local.attention_projections + 2 * summary_projections
    assert report.attention_scores == local.attention_scores + 2 * (summary_scores + making)
