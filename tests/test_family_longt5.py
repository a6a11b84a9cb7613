"""LongT5: T5's stacks and tied head, whose encoder attends locally (encoder_attention_type "local", the default): a
query reads the keys within local_radius of it, scored in blocks of local_radius + 1 against its own block and the two
beside it, over the input padded to whole blocks. "transient-global" is refused.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__longt5.json: 60,506,624,
LongT5ForConditionalGeneration; synthetic__longt5.json: 193,344). The forward of synthetic__longt5 is held here, group by
group, to FlopCounterMode (tools/flop_count.py on the meta device; its decoder's cross-attention, EncDecAttention, a
group of its own, which ffncalc counts in the attention): 16 tokens as tests/expected/flop_counter.json records them,
13 (padded to 16 in the encoder's blocks) and 40.
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


def test_an_input_shorter_than_a_block_pays_for_a_whole_block(write_config):
    # local_radius 7 (block_len 8), 3 tokens: P_b = 8, each layer 4 heads · 2 · (2 · 16 · 24 · 8) = 49,152 however few
    # of the 8 positions are tokens
    config = json.loads((ROOT / "tests" / "configs" / "synthetic__longt5.json").read_text())
    path = write_config({**config, "local_radius": 7, "num_decoder_layers": 1})
    encoder = flops(str(path), 3, causal=False).prefill.attention_scores - 2 * (2 * 2 * 4 * 16 * 3 * 3)
    assert encoder == 2 * 4 * 2 * (2 * 16 * 24 * 8) == 2 * 49_152


@pytest.mark.parametrize(
    "attention_type, match",
    [("transient-global", "encoder_attention_type 'transient-global' is not counted"), ("sparse", "neither")],
)
def test_other_encoder_attention_types_are_refused(write_config, attention_type, match):
    config = write_config({"model_type": "longt5", "encoder_attention_type": attention_type})
    with pytest.raises(InvalidConfigError, match=match):
        account(str(config))
