"""DeepSeek-V3.2: V3's MLA and MoE with a lightning indexer choosing the keys each layer attends to.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__deepseek_v32.json:
hidden 128, 4 layers, 8 heads, q_lora 64, kv_lora 32, qk 16 + 8, v 16, 8 experts of 48, 2 per token, 1 shared;
the indexer 4 heads of 32, top 64 keys).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

V32 = ROOT / "tests" / "configs" / "synthetic__deepseek_v32.json"


def config(**overrides):
    return {**json.loads(V32.read_text()), **overrides}


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_v32_every_layer_has_an_indexer():
    # wq_b: q_lora 64 → 4 × 32; wk: 128 → 32 and its LayerNorm (weight and bias); weights_proj: 128 → 4.
    indexer = 64 * 4 * 32 + 128 * 32 + 2 * 32 + 128 * 4
    for layer in account(str(V32)).layers:
        assert layer.parts["attention.indexer"] + layer.parts["norm.indexer_k_norm"] == indexer


def test_v32_attends_to_top_k_keys_and_scores_every_key():
    # Per attended key 2 · 8 heads · ((16 + 8) + 16), at most 64 keys; the indexer 2 · 4 · 32 per key, all n.
    for n in (32, 4096):
        expected = 4 * (2 * 8 * (24 + 16) * min(n, 64) + 2 * 4 * 32 * n)
        assert flops(str(V32), n).per_token.attention_scores == expected


def test_v32_mlp_layer_types_decide_which_layers_are_moe(write_config):
    report = account(str(write_config(config(mlp_layer_types=["sparse", "dense", "sparse", "dense"]))))
    assert [g.ffn_kind for g in sorted(report.layers, key=lambda g: g.indices[0])] == ["moe", "dense"]
    assert group(report, 0).indices == [0, 2]


def test_v32_mlp_layer_types_must_list_every_layer(write_config):
    with pytest.raises(InvalidConfigError, match="mlp_layer_types"):
        account(str(write_config(config(mlp_layer_types=["dense", "sparse"]))))


def test_v32_checkpoint_mtp_layers_come_from_a_key_transformers_does_not_read(write_config):
    with_mtp = account(str(V32))
    without = account(str(write_config({k: v for k, v in config().items() if k != "num_nextn_predict_layers"})))
    assert with_mtp.total_params == without.total_params
    names = {extra.name for extra in with_mtp.checkpoint_extras} - {extra.name for extra in without.checkpoint_extras}
    assert names == {"multi-token-prediction layers"}
