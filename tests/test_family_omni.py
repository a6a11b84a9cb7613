"""Qwen's omni thinkers, saved in transformers 4's layout. Qwen2.5-Omni: Qwen2.5-VL's tower with q, k and v apart,
an audio tower that pools and projects, Qwen2.5-VL's language model. Qwen3-Omni: Qwen3-VL's tower with its mergers
named as Qwen2.5-VL's, Qwen3-ASR's audio encoder with two projections, a Qwen3-MoE language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__qwen2_5_omni_thinker.json: 205,376; defaults__qwen2_5_omni_thinker.json:
11,338,288,896; synthetic__qwen3_omni_moe_thinker.json: 311,552; defaults__qwen3_omni_moe_thinker.json:
18,418,329,704).
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

QWEN25_OMNI = str(ROOT / "tests" / "configs" / "synthetic__qwen2_5_omni_thinker.json")
QWEN3_OMNI = str(ROOT / "tests" / "configs" / "synthetic__qwen3_omni_moe_thinker.json")


def test_qwen25_omni_thinkers_language_model_by_hand():
    # 2 layers of 64, 4 heads of 16, 2 KV heads: q 64 → 64, k and v 64 → 32 (biased), o 64 → 64; gate, up, down
    # 64 ↔ 96; two RMSNorms; a final norm; a 320 × 64 token table and an untied head
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert account(QWEN25_OMNI).language_model_params == 2 * layer + 64 + 2 * 320 * 64 == 102976


def test_qwen25_omni_audio_tower_pools_then_projects_by_hand():
    # layers of 32: q, v, out_proj biased, k_proj not; fc1 32 → 48, fc2, biased; two LayerNorms. conv1 16 → 32 and
    # conv2 32 → 32 (3 taps, biased), audio_bos_eos_token 2 × 64, ln_post, proj 32 → 64 (biased)
    layer = 4 * 32 * 32 + 3 * 32 + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32
    convolutions = (16 * 32 * 3 + 32) + (32 * 32 * 3 + 32)
    assert account(QWEN25_OMNI).components.audio == 2 * layer + convolutions + 2 * 64 + 2 * 32 + (32 * 64 + 64)


def test_qwen25_omni_vision_tower_keeps_q_k_v_apart_by_hand():
    # patch convolution 3 × 2 × 14 × 14 → 32 (no bias); blocks: q, k, v, proj 32 → 32 (biased), gated FFN 32 ↔ 48
    # (biased), two RMSNorms; merger: ln_q (32), mlp.0 128 → 128 and mlp.2 128 → 64 (biased)
    block = 4 * (32 * 32 + 32) + 2 * (32 * 48 + 48) + (48 * 32 + 32) + 2 * 32
    report = account(QWEN25_OMNI)
    assert report.components.vision == 3 * 2 * 14 * 14 * 32 + 2 * block == 55680
    assert report.components.projector == 32 + (128 * 128 + 128) + (128 * 64 + 64) == 24800
    tensors = checkpoint_tensors(load_config(QWEN25_OMNI).spec)
    assert {"visual.blocks.0.attn.q.weight", "visual.blocks.0.attn.k.bias"} <= tensors.keys()


def test_qwen25_omni_thinker_ties_by_its_own_flag_not_the_text_models(write_config):
    # Qwen2_5OmniThinkerConfig.tie_word_embeddings defaults to false; Qwen2_5OmniTextConfig's (true) is not read
    config = {"model_type": "qwen2_5_omni_thinker", "text_config": {"tie_word_embeddings": True}}
    assert account(str(write_config(config))).components.lm_head == 152064 * 3584


def test_qwen25_omni_thinkers_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "qwen2_5_omni_thinker"}))).total_params == 11338288896


# Qwen3-Omni's synthetic language model: 3 layers of 64, 4 heads and 2 KV heads of 24 (q/k RMSNorms over 24), layer 1
# dense (mlp_only_layers), layers 0 and 2 MoE: 4 experts of 32 (gate, up, down), 2 a token, a 4 × 64 router
QWEN3_OMNI_ATTENTION = 64 * 96 + 2 * 64 * 48 + 96 * 64
QWEN3_OMNI_EXPERT = 3 * 64 * 32


def test_qwen3_omni_language_model_with_its_dense_and_moe_layers_by_hand():
    report = account(QWEN3_OMNI)
    assert report.components.attention == 3 * QWEN3_OMNI_ATTENTION == 55296
    assert report.components.ffn == 2 * (4 * QWEN3_OMNI_EXPERT + 4 * 64) + 3 * 64 * 96 == 68096
    assert report.components.norm == 3 * (2 * 64 + 2 * 24) + 64 == 592


def test_qwen3_omni_active_parameters_run_two_experts_a_token_by_hand():
    # a text token runs the language model only; of the 4 experts of 6,144 in each of 2 MoE layers, it runs 2
    report = account(QWEN3_OMNI)
    assert report.active_params == report.language_model_params - 2 * 2 * QWEN3_OMNI_EXPERT == 119888


def test_qwen3_omni_audio_tower_with_its_two_projections_by_hand():
    # layers of 32 with every projection biased; conv2d1 1 → 8, conv2d2 and conv2d3 8 → 8 (3 × 3, biased); the mel
    # bins 16 → 8 → 4 → 2, conv_out 8 · 2 → 32 (no bias); ln_post; proj1 32 → 32 and proj2 32 → 64 (biased)
    layer = 4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 4 * 32
    convolutions = (8 * 9 + 8) + 2 * (8 * 8 * 9 + 8) + 16 * 32
    projections = (32 * 32 + 32) + (32 * 64 + 64)
    assert account(QWEN3_OMNI).components.audio == 2 * layer + convolutions + 2 * 32 + projections == 20000


def test_qwen3_omni_vision_mergers_are_named_as_qwen25s_by_hand():
    # merger: ln_q over 32, mlp.0 128 → 128, mlp.2 128 → 64; two deepstack mergers in merger_list, ln_q over 128
    mlp = (128 * 128 + 128) + (128 * 64 + 64)
    report = account(QWEN3_OMNI)
    assert report.components.projector == (2 * 32 + mlp) + 2 * (2 * 128 + mlp) == 74880
    tensors = checkpoint_tensors(load_config(QWEN3_OMNI).spec)
    assert {"visual.merger.mlp.0.weight", "visual.merger_list.1.ln_q.bias"} <= tensors.keys()


def test_qwen3_omni_thinkers_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "qwen3_omni_moe_thinker"}))).total_params == 18418329704
