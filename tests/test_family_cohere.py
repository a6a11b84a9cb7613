"""Cohere's Command family: Aya / Command-R (cohere), Command R7B (cohere2) and its MoE.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
AYA = "mlx-community/aya-23-8B-8bit"


def test_aya_23_8b_by_hand():
    # H 4,096, FFN 14,336, 32 layers of 32 query and 8 KV heads of 128, vocabulary 256,000, tied (the default).
    # A layer: q and o 4,096², k and v 4,096 × 1,024, SwiGLU 3 · H · I, one LayerNorm without bias (4,096)
    # before attention and the MLP, which run side by side. Outside: the embedding and the final LayerNorm.
    hidden, ffn, vocab = 4096, 14336, 256000
    layer = 2 * hidden * hidden + 2 * hidden * 1024 + 3 * hidden * ffn + hidden
    report = account(AYA)
    assert report.total_params == 32 * layer + vocab * hidden + hidden == 8_028_033_024
    assert report.components.lm_head == 0


def test_aya_mlx_quantization_entry_is_not_a_quantization_config():
    # The MLX conversion's "quantization": {"group_size": 64, "bits": 8} is MLX's own key: transformers does not
    # read it, and the architecture is counted as stored in the config's dtype.
    loaded = load_config(AYA)
    assert loaded.config.quantization_config is None
    assert loaded.config.stored_dtype == "float16"


def test_cohere_qk_norms_are_layer_norms_over_each_head_stored_two_dimensional():
    # use_qk_norm: a LayerNorm weight [heads, head_dim] for the queries and [kv_heads, head_dim] for the keys.
    spec = load_config(str(CONFIGS / "synthetic__cohere_qk_norm.json")).spec
    stored = checkpoint_tensors(spec)
    assert stored["model.layers.0.self_attn.q_norm.weight"] == (4, 24)
    assert stored["model.layers.0.self_attn.k_norm.weight"] == (2, 24)
    assert account(str(CONFIGS / "synthetic__cohere_qk_norm.json")).layers[0].parts["norm.q_norm"] == 4 * 24


def test_cohere2_makes_every_pattern_th_layer_full_and_reads_a_head_dim_key():
    # sliding_window_pattern 2: layers 1 and 3 full; head_dim 32 (a key of the config) wins over 64 / 4.
    sliding, full = account(str(CONFIGS / "synthetic__cohere2.json")).layers
    assert sliding.indices == [0, 2] and sliding.window == 128
    assert full.indices == [1, 3] and full.window is None
    assert full.parts["attention.q"] == 64 * 4 * 32


def test_cohere2_attention_scores_read_at_most_the_window_in_sliding_layers():
    # 2 · 4 heads · (32 + 32) per key; at 1,024: two sliding layers read 128 keys, two full ones 1,024.
    per_key = 2 * 4 * 64
    assert flops(str(CONFIGS / "synthetic__cohere2.json"), 1024).per_token.attention_scores == per_key * (
        2 * 128 + 2 * 1024
    )


def test_cohere2_moe_dense_prefix_has_its_own_width_and_window_pattern():
    # 5 layers, first_k_dense_replace 2: layers 0–1 dense (width 80), windows every 2nd of the prefix full;
    # layers 2–4 MoE, windows every 2nd of the rest full (layer 3). Shared MLP: 2 × 32 wide.
    # q 64 → 4 · 24, k and v 64 → 2 · 24, o back; RMSNorm 64 (rms_norm_eps is set).
    report = account(str(CONFIGS / "synthetic__cohere2_moe.json"))
    layers = {tuple(group.indices): group for group in report.layers}
    assert layers[(0,)].window == 128 and layers[(1,)].window is None
    assert layers[(2, 4)].window == 128 and layers[(3,)].window is None
    attention = 2 * 64 * 96 + 2 * 64 * 48
    assert layers[(0,)].params == attention + 3 * 64 * 80 + 64
    moe = 64 * 4 + 4 * 3 * 64 * 32 + 3 * 64 * 64
    assert layers[(3,)].params == attention + moe + 64
    assert report.moe.shared_expert_params == 3 * 3 * 64 * 64
