"""LED: BART's stacks and heads under led.*, one learned position table a stack (no offset), and an encoder whose
self-attention is Longformer's: global q, k and v projections in every layer (parameters, run only for global tokens,
which ffncalc's figures have none of) and a two-sided window of attention_window / 2 keys either side, scored in
overlapping chunks over the input padded to a multiple of the largest window.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__led.json: 459,801,600,
LEDForConditionalGeneration; synthetic__led.json: 204,768). The forward of synthetic__led is held here, group by group,
to FlopCounterMode (tools/flop_count.py --cpu: LEDEncoder reads whether any token is global with .item(), which the meta
device cannot answer; its decoder's cross-attention is a group of its own, which ffncalc counts in the attention):
16 tokens as tests/expected/flop_counter.json records them, and 13 and 40.
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__led.json")


def test_default_seq2seq_lm_by_hand(write_config):
    # LEDConfig(): vocabulary 50,265, d_model 1,024, 12 encoder and 12 decoder layers of 16 heads, MLPs 4,096, position
    # tables of 16,384 (encoder) and 1,024 (decoder) rows, tied. shared; each stack's positions and layernorm_embedding.
    # An encoder layer: query, key, value, their global copies and the output, all biased; two LayerNorms; fc1, fc2. A
    # decoder layer: self-attention and cross-attention (q, k, v, out_proj, biased), three LayerNorms, fc1, fc2. The
    # head is shared; final_logits_bias is a buffer.
    v, d, f = 50265, 1024, 4096
    mlp = d * f + f + f * d + d
    encoder = 7 * (d * d + d) + 4 * d + mlp
    decoder = 8 * (d * d + d) + 6 * d + mlp
    report = account(str(write_config({"model_type": "led"})))
    assert report.model_class == "LEDForConditionalGeneration"
    assert report.total_params == v * d + (16384 + 1024) * d + 4 * d + 12 * encoder + 12 * decoder == 459_801_600
    assert report.components.attention == 12 * 7 * (d * d + d) + 12 * 4 * (d * d + d)
    assert report.components.cross_attention == 12 * 4 * (d * d + d)


def encoder_scores(positions):
    """synthetic__led's encoder scores over P positions: 4 heads of 16, attention_window [8, 4] (w = 4, 2). Per head and
    layer, as modeling_led.py's LEDEncoderSelfAttention (Longformer's, copied) runs them: QK over P/w − 1 chunks of 2w
    queries × 2w keys, 2 · 16 · (P/w − 1) · 4w² = 2 · 16 · 4w(P − w); the values over P/w chunks of w queries × 3w keys,
    2 · 16 · 3wP (the padding mask's chunked product contracts a width of 1: a multiplication, no matmul)."""
    return sum(4 * (2 * 16 * 4 * w * (positions - w) + 2 * 16 * 3 * w * positions) for w in (4, 2))


# synthetic__led: d_model 64; encoder 2 layers of 4 heads, MLP 96, attention_window [8, 4]; decoder 2 layers of 2 heads,
# MLP 80; vocabulary 320, tied. N input tokens and N target tokens (the decoder's self-attention eager: all N × N
# scores, masked after). The encoder runs over P, N padded to a multiple of 8, and drops the padding: the decoder's
# cross-attention projects keys and values of N positions.
@pytest.mark.parametrize("tokens, positions", [(16, 16), (13, 16), (40, 40)])
def test_forward_by_hand_and_as_flop_counter_mode_counts_it(tokens, positions):
    n, p = tokens, positions
    encoder_attention = p * 2 * (2 * 4 * 64 * 64) + encoder_scores(p)  # q, k, v, output a position, the windows
    decoder_attention = n * 2 * (2 * 4 * 64 * 64) + 2 * (
        2 * 2 * 64 * n * n
    )  # q, k, v, out_proj; QK and AV, 2 · 64 · N²
    cross = 2 * (n * 2 * 2 * 64 * 64 + n * 2 * 2 * 64 * 64 + 2 * 2 * 64 * n * n)  # q and out_proj, k and v of N, scores
    mlp = p * 2 * (2 * 2 * 64 * 96) + n * 2 * (2 * 2 * 64 * 80)
    head = n * 2 * 64 * 320
    counted = {
        # FlopCounterMode, tools/flop_count.py --cpu, transformers 5.24 (16: tests/expected/flop_counter.json)
        16: {"total": 5_580_800, "attention": 2_304_000, "cross_attention": 1_179_648, "mlp": 1_441_792},
        13: {"total": 4_852_736, "attention": 2_062_848, "cross_attention": 938_496, "mlp": 1_318_912},
        40: {"total": 14_950_400, "attention": 6_266_880, "cross_attention": 3_440_640, "mlp": 3_604_480},
    }[n]
    assert encoder_attention + decoder_attention == counted["attention"]
    assert cross == counted["cross_attention"] and mlp == counted["mlp"]
    assert encoder_attention + decoder_attention + cross + mlp + head == counted["total"]
    report = flops(SYNTHETIC, n, causal=False).prefill
    assert report.attention_projections + report.attention_scores == counted["attention"] + counted["cross_attention"]
    assert report.attention_scores == encoder_scores(p) + 2 * (2 * 2 * 64 * n * n) + 2 * (2 * 2 * 64 * n * n)
    assert report.ffn == mlp and report.lm_head == head
    assert report.total == counted["total"]


def test_the_recorded_forward_is_the_one_held_here():
    recorded = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__led"]
    assert (recorded["tokens"], recorded["total"], recorded["cross_attention"]) == (16, 5_580_800, 1_179_648)


def test_windows_are_checked_as_for_longformer(write_config):
    with pytest.raises(InvalidConfigError, match="does not divide"):
        account(str(write_config({"model_type": "led", "encoder_layers": 2, "attention_window": [4, 6]})))
    with pytest.raises(InvalidConfigError, match="2 layers"):
        account(str(write_config({"model_type": "led", "encoder_layers": 2, "attention_window": [4, 4, 4]})))
