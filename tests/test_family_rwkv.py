"""RWKV-4: a recurrent time mix and a receptance-gated channel mix per block.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__rwkv.json, synthetic__rwkv.json, synthetic__rwkv_tied.json). FlopCounterMode
(tools/flop_count.py, 16 tokens, synthetic__rwkv_tied) counted 3,366,912 FLOPs: the matmuls below; it counts no
elementwise recurrence, which ffncalc adds as the mixer's state update, so no record is kept in flop_counter.json.
"""

import json

from ffncalc import account, flops, memory

from .conftest import ROOT

TIED = json.loads((ROOT / "tests" / "configs" / "synthetic__rwkv_tied.json").read_text())


def test_rwkv_default_model_by_hand(write_config):
    # RwkvConfig(): H 4,096, 32 blocks; time mix key, value, receptance, output 4 · H², time_decay and time_first
    # 2 · H, three time_mix vectors 3 · H; channel mix key and value 2 · H · 4H, receptance H², two time_mix vectors
    # 2 · H; two LayerNorms 4 · H (block 0's pre_ln 2 · H more); ln_out 2 · H; vocabulary 50,277, untied.
    hidden, vocab = 4096, 50277
    block = 4 * hidden * hidden + 5 * hidden + 2 * hidden * 4 * hidden + hidden * hidden + 2 * hidden + 4 * hidden
    report = account(str(write_config({"model_type": "rwkv"})))
    assert report.total_params == 32 * block + 2 * hidden + 2 * hidden + 2 * vocab * hidden == 7_392_649_216


def test_rwkv_matmuls_agree_with_flop_counter_mode(write_config):
    # synthetic__rwkv_tied: 16 tokens × 2 · (3 blocks × (key, value, receptance 64 × 48, output 48 × 64; key and
    # value 64 × 96 and back, receptance 64 × 64) + head 64 × 300) = 3,366,912, FlopCounterMode's total
    report = flops(str(write_config(TIED)), 16, causal=False).prefill
    assert report.attention_projections + report.ffn + report.lm_head == 3_366_912
    assert report.mixer_state == 16 * 3 * 11 * 48


def test_rwkv_state_is_fixed_whatever_the_context(write_config):
    # per block 3 · 48 (numerator, denominator, maximum) + 2 · 64 (the two shifted tokens), BF16, 3 blocks
    short = memory(str(write_config(TIED)), context=16)
    long = memory(str(write_config(TIED)), context=4096)
    assert short.kv_cache.bytes == long.kv_cache.bytes == 2 * 3 * (3 * 48 + 2 * 64)
