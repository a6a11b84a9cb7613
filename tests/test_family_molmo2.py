"""Molmo2: a ViT over crops, an attention-pooling adapter, and an OLMo-style language model whose token table holds
additional rows beyond its head, saved under the original Molmo names.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__molmo2.json: 152,336; synthetic__molmo2_olmo.json: 147,344;
defaults__molmo2.json: 8,694,602,192).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__molmo2.json")
OLMO = str(ROOT / "tests" / "configs" / "synthetic__molmo2_olmo.json")

MLP = 3 * 64 * 96  # SwiGLU of 96, no biases
TABLES = (320 + 8) * 64 + 320 * 64 + 64  # 320 + 8 token rows, a head of 320 (never tied), ln_f


def test_molmo2s_language_model_with_qwen3_norms_by_hand():
    # 2 layers of 64: q 4 heads of 16, k and v 2 heads, o (no biases); q_norm and k_norm over a head; 2 RMSNorms
    layer = (64 * 64 + 2 * 64 * 32 + 64 * 64) + 2 * 16 + MLP + 2 * 64
    assert account(CONFIG).language_model_params == 2 * layer + TABLES == 103296


def test_molmo2s_token_table_keeps_its_additional_rows_apart_from_the_head_by_hand():
    report = account(CONFIG)
    assert (report.components.embedding, report.components.lm_head) == (328 * 64, 320 * 64)


def test_molmo2s_olmo_norms_span_all_heads_and_qkv_bias_biases_q_k_v_by_hand():
    # qk_norm_type "olmo": q_norm over 4 · 16, k_norm over 2 · 16; qkv_bias: biases on q, k and v, none on o
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + (64 + 32) + MLP + 2 * 64
    assert account(OLMO).language_model_params == 2 * layer + TABLES == 103680


def test_molmo2s_vision_tower_by_hand():
    # 32 wide, 4 heads of 8, 2 key-value heads, all biased; fc 48 (biased); 2 LayerNorms; 3 layers; a patch linear
    # of 14 · 14 · 3 → 32 (biased) and 16 positions (378 → image_size 56: 4 × 4 patches)
    layer = 2 * (32 * 32 + 32) + 2 * (32 * 16 + 16) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 64
    assert account(CONFIG).components.vision == 3 * layer + (588 * 32 + 32) + 16 * 32 == 38704


def test_molmo2s_legacy_vision_keys_set_its_positions_by_hand():
    # image_default_input_size [42, 56] with image_patch_size 14: 3 × 4 = 12 positions; 2 layers, 4 key-value heads
    layer = 4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 64
    assert account(OLMO).components.vision == 2 * layer + (588 * 32 + 32) + 12 * 32 == 34240


def test_molmo2s_adapter_pools_two_layers_features_then_projects_by_hand():
    # image_pooling_2d: q 2 · 32 → 32, k and v 2 · 32 → 16, o 32 → 32, all biased; image_projector: w1 and w3
    # 32 → 40, w2 40 → 64 (no biases)
    pooling = (64 * 32 + 32) + 2 * (64 * 16 + 16) + (32 * 32 + 32)
    assert account(CONFIG).components.projector == pooling + 2 * 32 * 40 + 40 * 64 == 10336


def test_a_molmo2_text_token_runs_the_language_model_only_by_hand():
    # per token at context 8: q, k, v, o; the MLP; the head; 2 · heads · (16 + 16) a key
    per_token = flops(CONFIG, context=8).per_token
    assert per_token.attention_projections == 2 * 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64)
    assert per_token.attention_scores == 2 * 8 * 2 * 4 * (16 + 16)
    assert per_token.lm_head == 2 * 320 * 64


def test_molmo2s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "molmo2"}))).total_params == 8694602192
