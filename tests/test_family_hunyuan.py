"""Tencent's Hunyuan: the dense model and the MoE with a shared MLP.

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


@pytest.mark.parametrize("model_type", ["hunyuan_v1_dense", "hunyuan_v1_moe"])
def test_hunyuan_without_head_dim_is_refused_as_transformers_refuses(model_type, write_config):
    with pytest.raises(InvalidConfigError, match="head_dim: required"):
        account(str(write_config({"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4})))


def test_hunyuan_dense_layer_by_hand():
    # q and o 64 × 4 · 24 with biases, k and v 64 × 2 · 24 with biases; RMSNorms over each query and key head
    # (query_layernorm, key_layernorm: 24 each); SwiGLU 3 · 64 · 96; two RMSNorms of 64.
    report = account(str(CONFIGS / "synthetic__hunyuan_v1_dense.json"))
    attention = 2 * (64 * 96) + 96 + 64 + 2 * (64 * 48 + 48)
    assert report.layers[0].params == attention + 2 * 24 + 3 * 64 * 96 + 2 * 64
    stored = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__hunyuan_v1_dense.json")).spec)
    assert stored["model.layers.0.self_attn.query_layernorm.weight"] == (24,)


def test_hunyuan_moe_routes_each_layer_with_its_own_top_k():
    # moe_topk [2, 1, 3] of 4 experts of 3 · 64 · 48: a token leaves 2 + 3 + 1 experts unused; the shared MLP
    # (the same width) and the router gate.wg (64 × 4) run in every layer.
    report = account(str(CONFIGS / "synthetic__hunyuan_v1_moe.json"))
    expert = 3 * 64 * 48
    assert report.total_params - report.active_params == (2 + 3 + 1) * expert
    assert report.moe.shared_expert_params == 3 * expert
    assert report.moe.router_params == 3 * 64 * 4
