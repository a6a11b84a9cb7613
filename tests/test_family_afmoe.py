"""Arcee's AFMoE (Trinity): gated attention with q/k norms, four norms a layer, dense then MoE with shared experts.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__afmoe.json, synthetic__afmoe.json, synthetic__afmoe_dense.json).
"""

from ffncalc import account, flops
from ffncalc.api import load_config

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_afmoe_default_model_by_hand(write_config):
    # AfmoeConfig(): H 2,048, 32 layers of 16 heads of 128 (KV heads default to the heads), vocabulary 200,192.
    # Attention: q, k, v, o H² each and gate_proj H²; q/k norms 128 each; four layer norms of H.
    # Layer 0 dense, SwiGLU 3 · H · 6,144; the 31 others: 64 experts and a shared MLP of 2 · 1,408, all
    # 3 · H · width, router 64 × H, expert_bias 64.
    hidden, vocab = 2048, 200192
    expert = 3 * hidden * 1408
    moe = 64 * expert + 2 * expert + 64 * hidden + 64
    per_layer = 5 * hidden * hidden + 2 * 128 + 4 * hidden
    report = account(str(write_config({"model_type": "afmoe"})))
    total = 32 * per_layer + 3 * hidden * 6144 + 31 * moe + 2 * vocab * hidden + hidden
    assert report.total_params == total == 19_232_600_000
    # a token runs 6 of the 64 experts in each of the 31 MoE layers
    assert report.active_params == total - 31 * (64 - 6) * expert


def test_afmoe_output_gate_is_an_attention_matmul():
    # gate_proj: hidden 64 → 4 heads · 24 = 96, 2 FLOPs per multiply-add, in each of the 3 layers
    with_gate = flops(str(CONFIGS / "synthetic__afmoe_dense.json"), 1).per_token.attention_projections
    attention_only = 3 * 2 * (64 * 96 + 64 * 48 + 64 * 48 + 96 * 64)
    assert with_gate == attention_only + 3 * 2 * 64 * 96


def test_afmoe_default_layers_attend_globally_every_fourth_layer(write_config):
    spec = load_config(str(write_config({"model_type": "afmoe", "num_hidden_layers": 8}))).spec
    assert [layer.attention.window for layer in spec.layers] == [1024, 1024, 1024, None] * 2
