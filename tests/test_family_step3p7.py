"""Step 3.7 (step3p7): a layer-scaled ViT with two strided convolutions, a linear projector, and a MoE language model
with a gate per attention head and fewer heads in its sliding layers, saved under the original names.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__step3p7.json: 329,332; synthetic__step3p7_tied.json: 288,288;
defaults__step3p7.json: 197,824,847,872).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__step3p7.json")
TIED = str(ROOT / "tests" / "configs" / "synthetic__step3p7_tied.json")

# 64 wide, 2 key-value heads of 16: the full layers' 4 query heads, the sliding layers' 2 (num_sliding_attention_heads)
FULL = (64 * 64 + 2 * 64 * 32 + 64 * 64) + 64 * 4  # q, k, v, o; g_proj 64 → one gate a head
SLIDING = (64 * 32 + 2 * 64 * 32 + 32 * 64) + 64 * 2
MOE = 4 * 64 + 4 * 3 * 64 * 24 + 3 * 64 * 32  # router over 4 experts of 24, a shared expert of 32
DENSE = 3 * 64 * 96
LAYER_NORMS = 2 * 64 + 2 * 16  # two RMSNorms, q_norm and k_norm over a head
# the tower: 32 wide; in_proj 32 → 96 and out_proj (biased), c_fc to int(32 · 8960 / 1536) = 186 and c_proj (biased),
# ln_1 and ln_2, ls_1 and ls_2; conv1 (14 × 14, no bias), 16 positions, ln_pre, the two strided 3 × 3 convolutions
VISION_LAYER = (96 * 32 + 96) + (32 * 32 + 32) + (32 * 186 + 186) + (186 * 32 + 32) + 2 * 64 + 2 * 32
VISION_MODULES = 3 * 14 * 14 * 32 + 16 * 32 + 64 + (32 * 64 * 9 + 64) + (64 * 128 * 9 + 128)


def test_step3p7s_language_model_by_hand():
    # layers: sliding dense, full sparse, sliding sparse, full sparse (layer_types, mlp_layer_types)
    layers = (SLIDING + DENSE) + (FULL + MOE) + (SLIDING + MOE) + (FULL + MOE) + 4 * LAYER_NORMS
    assert account(CONFIG).language_model_params == layers + 2 * 320 * 64 + 64 == 176320


def test_step3p7s_attention_counts_its_head_gates_by_hand():
    assert account(CONFIG).components.attention == 2 * FULL + 2 * SLIDING == 41728


def test_step3p7s_tower_and_projector_by_hand():
    report = account(CONFIG)
    assert report.components.vision == 2 * VISION_LAYER + VISION_MODULES == 144820
    assert report.components.projector == 4 * 32 * 64  # vit_large_projector 128 → 64, no bias


def test_a_sliding_layer_reads_its_window_with_its_own_heads_by_hand():
    # at context 16: the full layers' 4 heads read 16 keys, the sliding layers' 2 heads 8; 2 · heads · (16 + 16) a key
    assert flops(CONFIG, context=16).per_token.attention_scores == 2 * 16 * 2 * 4 * 32 + 2 * 8 * 2 * 2 * 32


def test_step3p7s_defaults_make_layers_0_to_2_dense_and_mlp_bias_spares_the_experts_by_hand():
    # synthetic__step3p7_tied: no mlp_layer_types (dense 0-2, sparse 3), attention_bias and mlp_bias (the dense MLPs and
    # the shared expert biased, the stacked experts not), every layer full; tied by the top-level key
    attention = FULL + (64 + 32 + 32 + 64)
    dense = DENSE + (96 + 96 + 64)
    moe = MOE + (32 + 32 + 64)
    language = 3 * (attention + dense) + (attention + moe) + 4 * LAYER_NORMS + 320 * 64 + 64
    # the tower by the released configs' keys (width, layers, heads), mlp_ratio 1.5: c_fc to 48
    layer = (96 * 32 + 96) + (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 64 + 2 * 32
    report = account(TIED)
    assert report.components.lm_head == 0
    assert report.total_params == language + 2 * layer + VISION_MODULES + (128 * 64 + 64) == 288288


def test_step3p7s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "step3p7"}))).total_params == 197824847872
