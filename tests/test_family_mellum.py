"""JetBrains' Mellum: Qwen3-MoE's attention and experts, windows and dense layers by list.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__mellum.json, synthetic__mellum.json).
"""

from ffncalc import account
from ffncalc.api import load_config

from .conftest import ROOT


def test_mellum_default_model_by_hand(write_config):
    # MellumConfig(): H 2,304, 28 layers of 32 query and 4 KV heads of 128, every layer sparse: 64 experts of
    # 3 · H · 896 and a router 64 × H; q/k norms 128 each, two layer norms; vocabulary 98,304, untied.
    hidden, vocab = 2304, 98304
    expert = 3 * hidden * 896
    layer = 2 * hidden * 4096 + 2 * hidden * 512 + 2 * 128 + 2 * hidden + 64 * expert + 64 * hidden
    report = account(str(write_config({"model_type": "mellum"})))
    assert report.total_params == 28 * layer + 2 * vocab * hidden + hidden == 12_149_923_072
    assert report.active_params == report.total_params - 28 * (64 - 8) * expert


def test_mellum_layer_types_give_the_window_and_mlp_layer_types_the_dense_layers():
    spec = load_config(str(ROOT / "tests" / "configs" / "synthetic__mellum.json")).spec
    assert [layer.attention.window for layer in spec.layers] == [None, 8, None]
    assert [type(layer.ffn).__name__ for layer in spec.layers] == ["DenseFfn", "MoeFfn", "MoeFfn"]
