"""Tencent's Hy3 (hy_v3): per-head q/k norms, a dense first layer, then sigmoid-routed experts beside a shared MLP.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__hy_v3.json, synthetic__hy_v3.json).
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError

from .agreement import stored_tensors
from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__hy_v3.json")


def test_hy_v3_default_model_by_hand(write_config):
    # HYV3Config(): H 4,096, 80 layers of 64 query and 8 KV heads of 128, vocabulary 120,832, untied.
    # Attention: q and o 4,096 × 8,192, k and v 4,096 × 1,024, q/k norms 128 each. Layer 0 dense: SwiGLU
    # 3 · H · 13,312. Layers 1-79: 192 experts and one shared MLP of 3 · H · 1,536, router 192 × H.
    hidden, vocab = 4096, 120832
    attention = 2 * hidden * 8192 + 2 * hidden * 1024 + 2 * 128
    expert = 3 * hidden * 1536
    sparse = 192 * expert + expert + 192 * hidden
    layers = 80 * (attention + 2 * hidden) + 3 * hidden * 13312 + 79 * sparse
    report = account(str(write_config({"model_type": "hy_v3"})))
    assert report.total_params == layers + 2 * vocab * hidden + hidden == 295_033_528_320
    # a token runs 8 of the 192 experts in each of the 79 sparse layers
    assert report.active_params == report.total_params - 79 * (192 - 8) * expert == 20_675_715_072


def test_hy_v3_shared_mlp_is_num_shared_experts_wide():
    # synthetic: 2 shared experts of 32 make one shared MLP of 64, 3 · 64 · 64, in each of the two sparse layers
    report = account(SYNTHETIC)
    assert report.moe.shared_expert_params == 2 * 3 * 64 * 64


def test_hy_v3_checkpoint_keeps_the_router_shared_mlp_and_bias_under_its_own_names():
    stored = stored_tensors(load_config(SYNTHETIC).spec)  # parameters and persistent buffers
    assert stored["model.layers.1.mlp.router.gate.weight"] == (6, 64)
    assert stored["model.layers.1.mlp.shared_mlp.up_proj.weight"] == (64, 64)
    assert stored["model.layers.2.mlp.expert_bias"] == (6,)
    assert "model.layers.0.mlp.expert_bias" not in stored


def test_hy_v3_short_mlp_layer_types_is_refused(write_config):
    config = {"model_type": "hy_v3", "num_hidden_layers": 3, "mlp_layer_types": ["dense", "sparse"]}
    with pytest.raises(InvalidConfigError, match="mlp_layer_types has 2 entries for 3 layers"):
        account(str(write_config(config)))
