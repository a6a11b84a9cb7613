"""Mistral 4: DeepSeek-V3's MLA and dense-then-MoE stack, a router without correction bias, no multi-token-prediction
layers, its experts saved stacked.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__mistral4.json, defaults__mistral4.json).
"""

from ffncalc import account
from ffncalc.api import load_config

from .agreement import stored_tensors
from .conftest import ROOT

MISTRAL4 = str(ROOT / "tests" / "configs" / "synthetic__mistral4.json")


def test_mistral4_counts_mla_and_experts_by_hand():
    report = account(MISTRAL4)
    # MLA, 4 heads: q_a 64 → 48 and its norm, q_b 48 → 4 · (16 + 8), kv_a 64 → 32 + 8 and its norm (32),
    # kv_b 32 → 4 · (16 + 12), o 4 · 12 → 64; no biases
    attention = 64 * 48 + 48 + 48 * 96 + 64 * 40 + 32 + 32 * 112 + 48 * 64
    # layer 0 dense (gate, up, down 64 ↔ 96); layers 1-2: 4 experts and a shared one of 16, router 4 × 64 (no bias,
    # no correction bias)
    expert = 3 * 64 * 16
    dense, sparse = 3 * 64 * 96, 4 * expert + expert + 4 * 64
    total = 3 * (attention + 2 * 64) + dense + 2 * sparse + 64 + 2 * 1000 * 64
    assert report.total_params == total
    # a token runs 2 of each sparse layer's 4 experts
    assert report.active_params == total - 2 * 2 * expert


def test_mistral4_stores_no_correction_bias_nor_mtp_layers():
    # transformers saves parameters only (persistent buffers: 0 in synthetic__mistral4.json): the routers' weights,
    # the experts stacked as gate_up_proj [4, 32, 64] and down_proj [4, 64, 16]
    tensors = stored_tensors(load_config(MISTRAL4).spec)
    assert tensors["model.layers.1.mlp.experts.gate_up_proj"] == (4, 32, 64)
    assert tensors["model.layers.1.mlp.experts.down_proj"] == (4, 64, 16)
    assert not [name for name in tensors if "correction_bias" in name or name.startswith("model.layers.3")]
