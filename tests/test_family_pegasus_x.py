"""Pegasus-X: Pegasus's pre-LN stacks (computed sinusoidal positions, no table; unbiased attention; the head tied to
shared), whose encoder pads its input to whole blocks of block_size and runs num_global_tokens learned global tokens
through every layer beside it: the input's queries read their block and the global keys, the global queries read
everything; every other layer staggers its blocks by half a block.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__pegasus_x.json: 568,568,832,
PegasusXForConditionalGeneration; synthetic__pegasus_x.json: 166,432). The forward of synthetic__pegasus_x is held
here, group by group, to FlopCounterMode (tools/flop_count.py on the meta device; its decoder's cross-attention,
encoder_attn, a group of its own, which ffncalc counts in the attention): 16 tokens as tests/expected/flop_counter.json
records them, 13 (padded to 16) and 40; and one more config, unstaggered with blocks of 8, at 13 tokens.
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__pegasus_x.json")


def test_default_seq2seq_lm_by_hand(write_config):
    # PegasusXConfig(): vocabulary 96,103, d_model 1,024, 16 encoder and 16 decoder layers of 16 heads, MLPs 4,096, 32
    # global tokens, tied. shared (no position table: the positions are computed); the encoder's embed_global (32 × d)
    # and final layer_norm, the decoder's layer_norm. An encoder layer: q, k, v, out_proj (no biases), fc1 and fc2
    # (biased), three LayerNorms (self_attn_layer_norm, global_self_attn_layer_norm, final_layer_norm); a decoder
    # layer: self- and cross-attention (no biases), three LayerNorms, fc1, fc2. No final_logits_bias.
    v, d, f, g = 96103, 1024, 4096, 32
    mlp = d * f + f + f * d + d
    encoder = 4 * d * d + 3 * 2 * d + mlp
    decoder = 8 * d * d + 3 * 2 * d + mlp
    report = account(str(write_config({"model_type": "pegasus_x"})))
    assert report.model_class == "PegasusXForConditionalGeneration"
    assert report.total_params == v * d + g * d + 16 * encoder + 16 * decoder + 2 * 2 * d == 568_568_832
    assert report.components.other == g * d


def encoder_scores(positions, block, staggered_by, globals_=3, heads=4, head_dim=16):
    """One encoder layer's scores by hand, from modeling_pegasus_x.py's PegasusXGlobalLocalAttention, over L =
    P + STAGGERED_BY positions (PegasusXEncoderLayer.pad_local_tokens adds half a block of zeros at either end of a
    staggered layer's input), G = GLOBALS_ global tokens:
    compute_global_attention_representations: the G global queries against the G global and L local keys, einsum
    BHGF,BHXF->BHGX, 2 · d · G · (G + L) a head, and the values, BHGX,BHXF->BHGF, the same;
    compute_local_attention_representations: the L local queries in L / block blocks, against the G global keys
    (BHNKF,BHGF->BHNKG, 2 · d · L · G) and their block's keys (BHNKF,BHNXF->BHNKX, 2 · d · L · block), and the values
    likewise. The masks are added, no matmul."""
    local = positions + staggered_by
    per_head = 2 * head_dim * (globals_ * (globals_ + local) + local * globals_ + local * block)
    return heads * 2 * per_head  # QK and the values alike


# synthetic__pegasus_x: d_model 64; encoder 2 layers of 4 heads, MLP 96; decoder 2 layers of 2 heads, MLP 80;
# vocabulary 320, tied; 3 global tokens, block_size 4, stagger_local_blocks (layer 1 staggered by 4). N input tokens and
# N target tokens (the decoder's self-attention eager: all N × N scores, masked after). PegasusXEncoder pads the input to
# P, a multiple of 4; its layers run over P positions and the 3 global tokens (layer 1's attention over P + 4), and it
# drops the padding after the last: the decoder's cross-attention projects keys and values of N positions. Per
# position: q, k, v, out_proj 2 · 4 · 64² = 32,768; the encoder's MLP 2 · 2 · 64 · 96 = 24,576, the decoder's
# 2 · 2 · 64 · 80 = 20,480. The head 2 · 64 · 320 = 40,960 a token.
@pytest.mark.parametrize("tokens, positions", [(16, 16), (13, 16), (40, 40)])
def test_forward_by_hand_and_as_flop_counter_mode_counts_it(tokens, positions):
    n, p, g = tokens, positions, 3
    encoder_projections = (p + g) * 32_768 + (p + 4 + g) * 32_768
    scores = encoder_scores(p, 4, 0) + encoder_scores(p, 4, 4)
    encoder_attention = encoder_projections + scores
    decoder_attention = 2 * (n * 32_768 + 2 * 2 * 2 * 32 * n * n)  # QK and AV, 2 · 2 heads · 32 · N² each
    cross = 2 * (n * 16_384 + n * 16_384 + 2 * 2 * 2 * 32 * n * n)  # q and out_proj; k and v of N positions; scores
    mlp = 2 * (p + g) * 24_576 + 2 * n * 20_480
    head = n * 40_960
    counted = {
        # FlopCounterMode, tools/flop_count.py (meta), transformers 5.24 (16: tests/expected/flop_counter.json)
        16: {"total": 6_076_928, "attention": 2_652_672, "cross_attention": 1_179_648, "mlp": 1_589_248},
        13: {"total": 5_348_864, "attention": 2_411_520, "cross_attention": 938_496, "mlp": 1_466_368},
        40: {"total": 15_440_384, "attention": 6_609_408, "cross_attention": 3_440_640, "mlp": 3_751_936},
    }[n]
    assert encoder_attention + decoder_attention == counted["attention"]
    assert cross == counted["cross_attention"] and mlp == counted["mlp"]
    assert encoder_attention + decoder_attention + cross + mlp + head == counted["total"]
    report = flops(SYNTHETIC, n, causal=False).prefill
    assert report.attention_projections == encoder_projections + 2 * n * 32_768 + 2 * n * 32_768
    assert report.attention_scores == scores + 2 * 2 * (2 * 2 * 2 * 32 * n * n)
    assert report.ffn == mlp and report.lm_head == head
    assert report.total == counted["total"]


def test_unstaggered_blocks_of_eight(write_config):
    # synthetic__pegasus_x with stagger_local_blocks false and block_size 8, 13 tokens (P = 16): FlopCounterMode
    # (tools/flop_count.py, meta, transformers 5.24) counts 5,240,320 in all, 2,302,976 in the self-attention groups
    config = json.loads((ROOT / "tests" / "configs" / "synthetic__pegasus_x.json").read_text())
    path = write_config({**config, "stagger_local_blocks": False, "block_size": 8})
    encoder_attention = 2 * ((16 + 3) * 32_768 + encoder_scores(16, 8, 0))
    decoder_attention = 2 * (13 * 32_768 + 2 * 2 * 2 * 32 * 13 * 13)
    assert encoder_attention + decoder_attention == 2_302_976
    report = flops(str(path), 13, causal=False).prefill
    assert report.total == 5_240_320


def test_the_recorded_forward_is_the_one_held_here():
    recorded = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__pegasus_x"]
    assert (recorded["tokens"], recorded["total"], recorded["cross_attention"]) == (16, 6_076_928, 1_179_648)


def test_an_odd_block_cannot_be_staggered(write_config):
    with pytest.raises(InvalidConfigError, match="block_size 5 is odd"):
        account(str(write_config({"model_type": "pegasus_x", "block_size": 5})))
    assert account(str(write_config({"model_type": "pegasus_x", "block_size": 5, "stagger_local_blocks": False})))
