"""Doge: Llama's layout with per-head q/k norms, the dynamic mask (dt_proj and A: a gate per key and KV head, the
keep_window_size keys with the largest gates attended) and learned residual scales.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__doge.json: 403,055,872;
synthetic__doge.json: 104,072), and a forward pass of synthetic__doge to FlopCounterMode by tests/test_flops.py
(16 tokens, within its keep_window_size of 64). Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__doge.json")


def test_default_by_hand(write_config):
    # DogeConfig(): hidden 1,024, 8 heads of 128 (8 KV heads), 32 layers, gated MLP of 2,048, vocabulary 32,768
    # untied. A layer: q, k, v, o 4 · 1,024², dt_proj 1,024 → 8, A 8, q_norm and k_norm 2 · 128, MLP 3 · 1,024 ·
    # 2,048, two RMSNorms and two residual scales 4 · 1,024; the final norm; the table and the head 2 · 32,768 · 1,024.
    h = 1024
    layer = 4 * h * h + h * 8 + 8 + 2 * 128 + 3 * h * 2048 + 4 * h
    report = account(str(write_config({"model_type": "doge"})))
    assert report.total_params == 32 * layer + h + 2 * 32768 * h == 403_055_872


def test_gate_projection_runs_every_token():
    # synthetic: dt_proj reads the values (2 KV heads · 16) and emits one gate a KV head, biased (attention_bias)
    report = flops(SYNTHETIC, 16, causal=False).prefill
    projections = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 32 * 2
    assert report.attention_projections == 16 * 2 * 2 * projections == 790_528


def test_a_query_reads_at_most_keep_window_size_keys():
    # per key 2 · 4 heads · (16 + 16), 2 layers; keep_window_size 64
    per_key = 2 * 2 * 4 * 32
    assert flops(SYNTHETIC, 32).per_token.attention_scores == 32 * per_key
    report = flops(SYNTHETIC, 4096)
    assert report.per_token.attention_scores == 64 * per_key
    assert any(convention.startswith("picked keys:") for convention in report.conventions)


def test_every_key_stays_cached():
    # the gates pick among all keys: per token 2 layers · 2 KV heads · (16 + 16), BF16, at any context
    assert memory(SYNTHETIC, context=4096).kv_cache.bytes == 4096 * 2 * 2 * 2 * 32


def test_causal_prefill_reads_each_query_its_picked_keys():
    # token i reads min(i, 64) keys: Σ_{i=1..100} min(i, 64) = 64 · 65 / 2 + 36 · 64
    per_key = 2 * 2 * 4 * 32
    report = flops(SYNTHETIC, 100).prefill
    assert report.attention_scores == (64 * 65 // 2 + 36 * 64) * per_key


def test_a_head_dim_key_is_read_as_transformers_reads_it(write_config):
    # DogeAttention reads config.head_dim with getattr: 64 here halves q and o (8 · 64 of 1,024) and k and v; one layer,
    # transformers 5.24 on meta: 75,506,824
    config = {"model_type": "doge", "head_dim": 64, "num_hidden_layers": 1}
    assert account(str(write_config(config))).total_params == 75_506_824


def test_cdmoe_is_refused(write_config):
    with pytest.raises(InvalidConfigError, match="is_moe"):
        account(str(write_config({"model_type": "doge", "is_moe": True})))
