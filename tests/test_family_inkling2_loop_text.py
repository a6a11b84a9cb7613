"""Inkling 2 Loop's text model: Inkling 2 whose middle layers run again in further passes, each pass after the first
fed messages from the previous one through learned queries and message gates.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__inkling2_loop_text.json, synthetic__inkling2_loop_text.json). Every layer is
an MoE, whose routing FlopCounterMode on the meta device cannot run: no FLOP record.
"""

import json
from pathlib import Path

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

SYNTHETIC = "tests/configs/synthetic__inkling2_loop_text.json"
#: tests/configs/synthetic__inkling2_text.json's total, the same model without the loop (test_family_inkling2_text.py)
UNLOOPED = 266_784


def test_inkling2_loop_text_default_model_by_hand(write_config):
    # Inkling2LoopTextConfig(): H 2,304, 24 layers (4 full, 20 sliding), 24 heads of 128, 8 key-value heads, 128
    # experts of 1,152; layers 6-17 looped, each with four message gates of rank 64 (2H · 64 + 2 · 64 · H); the
    # message queries 2 × (2 · 12) × H. Per layer as Inkling 2's (test_family_inkling2_text.py), with 3 · H · 3,072
    # for q, o and the output gate, sinks H · 24, relative states H · 24 · 16, their scale 24 · 16, the query scale
    # 24 · 128. Residual queries: 19 sliding attention inputs of one, 4 full of three, 24 MLP inputs, the final one.
    hidden = 2304
    common = (
        3 * hidden * 3072 + 2 * hidden * 1024 + hidden * 24 + hidden * 384 + 3072 + 384 + 16 * 1024
        + 2 * hidden * 4 + 128 * hidden + 128 * 3 * hidden * 1152
    )  # fmt: skip
    sliding = common + 2 * 1024 * 4 + 2 * hidden
    full = common + 2 * 4 * 1024 + 2 * 32 * hidden + 4 * hidden
    gates = 12 * 4 * (64 * 2 * hidden + 2 * hidden * 64)
    outside = 201024 * hidden + 2 * hidden + 200058 * hidden + (19 + 3 * 4 + 24 + 1) * hidden + 2 * 24 * hidden
    report = account(str(write_config({"model_type": "inkling2_loop_text"})))
    assert report.total_params == 20 * sliding + 4 * full + gates + outside == 26_068_156_416


def test_inkling2_loop_text_adds_message_gates_and_queries():
    # layers 3-5 looped, four gates of rank 8 each (2 · 64 · 8 + 2 · 64 · 8), message queries 2 × 6 × 64
    assert account(SYNTHETIC).total_params == UNLOOPED + 3 * 4 * 4 * 64 * 8 + 2 * 6 * 64 == 292_128


def test_inkling2_loop_text_reads_the_checkpoints_loop_config(write_config):
    # loop_config's gate_rank (4) wins over loop_gate_rank (8): the gates halve
    config = json.loads(Path(SYNTHETIC).read_text())
    config["loop_config"] = {"core_start": 3, "core_end": 6, "num_passes": 2, "gate_rank": 4}
    assert account(str(write_config(config))).total_params == UNLOOPED + 3 * 4 * 4 * 64 * 4 + 2 * 6 * 64 == 279_840


def test_inkling2_loop_text_further_passes_run_the_loop_layers_again():
    # 20,480 a token under other without the loop (test_family_inkling2_text.py). Each of the 2 further passes runs
    # layers 3, 4 and 5 again: their relative bias and residuals (1,792, 2,048, 3,840), attn_sconv and mlp_sconv
    # (768 each), four message queries over one source (4 · 4 · 1 · 64) and the gates (2 · 4 · 2,048 each)
    again = 1792 + 2048 + 3840 + 3 * 768 + 3 * 4 * 4 * 64 + 3 * 2 * 4 * 2048
    assert flops(SYNTHETIC, 1).per_token.other == 20480 + 2 * again == 144_896


def test_inkling2_loop_text_refuses_a_loop_off_the_blocks(write_config):
    config = json.loads(Path(SYNTHETIC).read_text())
    config["loop_layer_index_start"] = 2
    with pytest.raises(InvalidConfigError, match=r"loop_layer_index_start \(2\) must be a multiple of n_layers_per"):
        account(str(write_config(config)))
