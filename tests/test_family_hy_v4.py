"""Hy4 (hy_v4): MLA with an indexer shared across layers, a gate and a sink per head, dense-then-MoE layers, and
hyper-connections over hc_mult streams.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__hy_v4.json, synthetic__hy_v4.json) and FlopCounterMode counts the same FLOPs for
synthetic__hy_v4_dense (tests/test_flops.py).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__hy_v4.json"


def test_hy_v4_default_model_by_hand(write_config):
    # HYV4Config(): H 2,816, 34 layers of 32 heads; q latent 1,536, kv latent 512, qk 192 + 64, v 256; vocabulary
    # 120,832, untied. Attention: q_a H × 1,536 and its norm, q_b 1,536 × 32 · 256, kv_a H × 576, its norm 512, kv_b
    # 512 × 32 · (192 + 256), o and the gate 8,192 × H each, 32 sinks. The indexer (layers 0, 1, 5, 9 … 33: ten):
    # wq_b 1,536 × 16 · 128, wk H × 128, its LayerNorm 2 · 128, weights_proj H × 16. Hyper-connections: two per layer
    # of fn 8 × 4 · H, base 8, scale 2; hc_head fn 4 × 4 · H, base 4, scale 1. Layer 0 dense (3 · H · 6,912), the 33
    # others 256 experts and a shared one of 3 · H · 768, router 256 × H.
    hidden, vocab = 2816, 120832
    attention = hidden * 1536 + 1536 + 1536 * 8192 + hidden * 576 + 512 + 512 * 32 * 448 + 2 * 8192 * hidden + 32
    indexer = 1536 * 16 * 128 + hidden * 128 + 2 * 128 + hidden * 16
    connections = 2 * (8 * 4 * hidden + 8 + 2)
    moe = 257 * 3 * hidden * 768 + 256 * hidden
    total = (
        34 * (attention + connections + 2 * hidden)
        + 10 * indexer
        + 3 * hidden * 6912
        + 33 * moe
        + 2 * vocab * hidden
        + hidden
        + 4 * 4 * hidden
        + 5
    )
    report = account(str(write_config({"model_type": "hy_v4"})))
    assert report.total_params == total == 58_278_193_133


def test_hy_v4_active_parameters_count_eight_routed_experts():
    # synthetic: 3 sparse layers of 6 experts of 3 · 96 · 24; a token runs 2 of them.
    report = account(str(SYNTHETIC))
    expert = 3 * 96 * 24
    assert report.total_params - report.active_params == 3 * (6 - 2) * expert


def test_hy_v4_shared_indexer_layers_hold_no_indexer():
    # synthetic: indexer_types default full, full, shared, shared (full at 0 and where (i − 1) % 4 == 0).
    report = account(str(SYNTHETIC))
    full, shared = (next(g for g in report.layers if i in g.indices) for i in (1, 2))
    # wq_b 48 × 3 · 16, wk 96 × 16, weights_proj 96 × 3; and k_norm's 2 · 16, a norm
    assert full.components.attention - shared.components.attention == 48 * 48 + 96 * 16 + 96 * 3
    assert full.components.norm - shared.components.norm == 2 * 16


def test_hy_v4_kv_cache_holds_the_latent_and_the_full_layers_indexer_keys():
    # Each layer caches kv_lora_rank + qk_rope_head_dim = 40 elements a token; layers 0 and 1 (full indexers) also
    # their indexer's key of 16. BF16: 2 bytes.
    report = memory(str(SYNTHETIC), 100, kv_dtype="bf16")
    assert report.kv_cache.bytes_per_token == (4 * 40 + 2 * 16) * 2


def test_hy_v4_attention_reads_the_top_k_keys_past_index_topk():
    # At context 1,000 each layer's 4 heads read 16 keys: 2 · 4 · (28 + 24) each; the two full indexers score every
    # key with 3 heads of 16 and weigh the heads (2 · 3 · 16 + 2 · 3).
    report = flops(str(SYNTHETIC), 1000)
    assert report.per_token.attention_scores == 4 * 2 * 4 * 52 * 16 + 2 * (2 * 3 * 16 + 2 * 3) * 1000


def test_hy_v4_hyper_connections_cost_their_projections_only():
    # Two connections a layer of fn [6, 3 · 96], and hc_head's fn [3, 3 · 96]: no stream mixing (no comb).
    assert flops(str(SYNTHETIC), 1).per_token.other == 4 * 2 * 2 * 6 * 288 + 2 * 3 * 288


@pytest.mark.parametrize("field", ["mlp_layer_types", "layer_types"])
def test_hy_v4_layer_lists_of_the_wrong_length_are_refused(write_config, field):
    value = ["dense", "sparse"] if field == "mlp_layer_types" else ["indexed_attention"] * 2
    config = {**json.loads(SYNTHETIC.read_text()), field: value}
    with pytest.raises(InvalidConfigError, match=f"{field} has 2 entries for 4 layers"):
        account(str(write_config(config)))
