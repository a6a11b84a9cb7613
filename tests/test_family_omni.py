"""Qwen2.5-Omni's thinker: Qwen2.5-VL's tower with q, k and v apart, an audio tower that pools and projects, and
Qwen2.5-VL's language model, saved in transformers 4's layout.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__qwen2_5_omni_thinker.json: 205,376; defaults__qwen2_5_omni_thinker.json:
11,338,288,896).
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

QWEN25_OMNI = str(ROOT / "tests" / "configs" / "synthetic__qwen2_5_omni_thinker.json")


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
