"""rednote-hilab's dots.llm1: Qwen3's attention around DeepSeek-V3's dense-then-MoE stack.

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
DOTS = str(CONFIGS / "synthetic__dots1.json")


def test_dots1_layer_by_hand():
    # q and o 64 × 4 · 32 with biases, k and v 64 × 2 · 32 with biases, q/k RMSNorms per head (32 each), two
    # RMSNorms of 64; layer 0 dense (SwiGLU 3 · 64 · 96), layers 1–3 MoE: router 64 × 6, 6 experts and a shared
    # MLP of 2 × 16, each 3 · 64 · 16 per 16 of width.
    attention = 2 * 64 * 128 + 128 + 64 + 2 * (64 * 64 + 64) + 2 * 32
    layers = {tuple(group.indices): group for group in account(DOTS).layers}
    assert layers[(0,)].params == attention + 3 * 64 * 96 + 2 * 64
    assert layers[(1,)].params == attention + 64 * 6 + 6 * 3 * 64 * 16 + 3 * 64 * 32 + 2 * 64


def test_dots1_slides_from_max_window_layers_on():
    windows = {tuple(group.indices): group.window for group in account(DOTS).layers}
    assert windows == {(0,): None, (1,): None, (2, 3): 128}  # max_window_layers 2


def test_dots1_active_parameters_and_router_bias_buffers():
    report = account(DOTS)
    assert report.total_params - report.active_params == 3 * (6 - 2) * 3 * 64 * 16
    (bias,) = report.checkpoint_extras
    assert bias.elements == 3 * 6


@pytest.mark.parametrize("field", ["n_routed_experts", "n_shared_experts"])
def test_dots1_moe_layers_need_their_expert_counts_as_transformers_does(field, write_config):
    config = {
        "model_type": "dots1",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 2,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
    }
    del config[field]
    with pytest.raises(InvalidConfigError, match=f"{field}: required"):
        account(str(write_config(config)))
    config["first_k_dense_replace"] = 2  # no MoE layer: nothing needs them
    assert account(str(write_config(config))).moe is None
