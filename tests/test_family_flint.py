"""Recursive's Flint: Qwen3-MoE's attention with a sink per head, sliding and full layers, an ungated shared expert.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__flint.json, synthetic__flint.json, synthetic__flint_dense.json).
"""

from ffncalc import account

from .conftest import ROOT


def test_flint_default_model_by_hand(write_config):
    # FlintConfig(): H 2,048, 49 layers of 32 query and 4 KV heads of 128, vocabulary 150,144, untied.
    # Attention: q and o H × 4,096, k and v H × 512, q/k norms 128 each, a sink per head (32). Layers 0 and 1
    # dense (mlp_only_layers' default [0, 1]: SwiGLU 6,144); the 47 others: a router 256 × H, 256 experts of
    # 3 · H · 512 and a shared expert of 3 · H · 1,024 with no gate.
    hidden, vocab = 2048, 150144
    attention = 2 * hidden * 4096 + 2 * hidden * 512 + 2 * 128 + 32
    dense = attention + 3 * hidden * 6144 + 2 * hidden
    moe = attention + 256 * hidden + 256 * 3 * hidden * 512 + 3 * hidden * 1024 + 2 * hidden
    report = account(str(write_config({"model_type": "flint"})))
    assert report.total_params == 2 * dense + 47 * moe + 2 * vocab * hidden + hidden == 39_785_287_456


def test_flint_default_layer_types_attend_fully_on_the_first_two_every_fourth_and_the_last(write_config):
    # FlintConfig.__post_init__: full where i < 2, i % 4 == 1 or i == 7, so layers 0, 1, 5, 7 of 8
    report = account(str(write_config({"model_type": "flint", "num_hidden_layers": 8})))
    full = [i for group in report.layers if group.window is None for i in group.indices]
    assert sorted(full) == [0, 1, 5, 7]


def test_flint_shared_expert_has_no_gate():
    # synthetic: layer 1's MoE holds a router 6 × 64, 6 experts of 3 · 64 · 32 and a shared expert of 3 · 64 · 40,
    # and nothing more (Qwen2-MoE's shared_expert_gate would add 64)
    report = account(str(ROOT / "tests" / "configs" / "synthetic__flint.json"))
    layer = next(group for group in report.layers if 1 in group.indices)
    assert layer.components.ffn == 6 * 64 + 6 * 3 * 64 * 32 + 3 * 64 * 40
