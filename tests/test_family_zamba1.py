"""Zamba (v1): Mamba layers with per-head x_proj and dt_proj, and hybrid layers that run the one shared transformer
block (held by the first, borrowed by the others) before a Mamba layer of their own.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__zamba.json, synthetic__zamba.json, synthetic__zamba_layer_types.json).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__zamba.json"


def test_zamba_default_model_by_hand(write_config):
    # ZambaConfig(): H 3,712, 76 layers, vocabulary 32,000, tied. Mamba: 2 heads over 7,424 channels, dt_rank
    # ceil(3,712 / 16) = 232, state 16, 4 taps. in_proj H × 2 · 7,424, the conv 7,424 × 4 and its bias, x_proj
    # 2 × (232 + 32) × 3,712, dt_proj 7,424 × 232 and its bias, A_log 7,424 × 16, D, out_proj 7,424 × H, an RMSNorm.
    # Hybrid layers at 2 and 3 + 4, 10 … 70 (13), each with a linear H × H; the shared block once: an RMSNorm of
    # 7,424, q, k, v 7,424 × 16 · 464, o 7,424 × H, an RMSNorm, the gated MLP 3 · H · 14,848.
    hidden, inner = 3712, 7424
    mamba = (
        hidden * 2 * inner
        + 5 * inner
        + inner * 264
        + inner * 232
        + inner
        + inner * 16
        + inner
        + inner * hidden
        + hidden
    )
    block = inner + 3 * inner * inner + inner * hidden + hidden + 3 * hidden * 14848
    total = 76 * mamba + block + 13 * hidden * hidden + 32000 * hidden + hidden
    report = account(str(write_config({"model_type": "zamba"})))
    assert report.total_params == total == 7_232_490_496


def test_zamba_shared_block_runs_at_every_hybrid_layer():
    # synthetic: hybrid layers 2, 4 and 7 (3 + 1, 3 + 4). Per token each runs the block: q, k, v 128 × 4 · 32 each
    # (attention over 2 · 64 with heads of 2 · 64 // 4), k and v with 2 heads; o 128 × 64; the MLP 3 · 64 · 112.
    per_token = flops(str(SYNTHETIC), 1).per_token
    assert per_token.ffn == 3 * 2 * 3 * 64 * 112
    assert per_token.attention_projections == 3 * 2 * (128 * 128 + 2 * 128 * 64 + 128 * 64)


def test_zamba_kv_cache_holds_each_hybrid_layers_keys_and_every_mamba_state():
    # synthetic at 100 tokens: 3 hybrid layers cache keys and values of 2 heads · 32; all 9 layers' mixers (and the
    # hybrid layers' own) keep a state of 128 channels × 8 and their conv's last 2 inputs of 128. BF16: 2 bytes.
    report = memory(str(SYNTHETIC), 100, kv_dtype="bf16")
    assert report.kv_cache.bytes == (3 * 100 * 2 * 64 + 9 * (128 * 8 + 128 * 2)) * 2


def test_zamba_mamba_heads_must_divide_its_channels(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "n_mamba_heads": 3}
    with pytest.raises(InvalidConfigError, match="n_mamba_heads"):
        account(str(write_config(config)))
