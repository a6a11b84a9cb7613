"""Nemotron-H Omni: a RADIO tower, a pixel-shuffle projector, an optional Parakeet audio encoder and Nemotron-H.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__nemotron_h_omni.json: 2,659,803,008; synthetic__nemotron_h_omni.json: 192,776).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__nemotron_h_omni.json")


def test_the_default_nemotron_h_omni_by_hand(write_config):
    # NemotronHConfig's four default layers (Mamba-2, MoE, attention, MLP) of hidden 4096, each behind one RMSNorm
    mamba = (4096 * (2 * 8192 + 2 * 8 * 128 + 128)) + (10240 * 4 + 10240) + 3 * 128 + 8192 + 8192 * 4096 + 4096
    moe = 8 * 2 * 4096 * 7688 + 2 * 4096 * 7688 + 8 * 4096 + 4096  # 8 experts, the shared one, the router
    attention = 2 * 4096 * 4096 + 2 * 4096 * 8 * 128 + 4096
    mlp = 2 * 4096 * 21504 + 4096
    text = mamba + moe + attention + mlp + 4096 + 2 * 131072 * 4096  # norm_f; the table and the head
    # RadioConfig with video_temporal_patch_size 2: 32 blocks of 1280 (qkv and proj biased, fc1 → 5120 and fc2
    # biased, two LayerNorms, two layer scales); patch and video embedders without biases over 3 · 16² and
    # 2 · 3 · 16² values, a 128 × 128 position grid, 3 class and 7 register tokens
    block = (
        (1280 * 3840 + 3840) + (1280 * 1280 + 1280) + (1280 * 5120 + 5120) + (5120 * 1280 + 1280) + 4 * 1280 + 2 * 1280
    )
    vision = 32 * block + 768 * 1280 + 1536 * 1280 + 128 * 128 * 1280 + 10 * 1280
    # the projector over 2 × 2 patches: an RMSNorm over 4 · 1280, 5120 → 4096 → 4096 without biases
    projector = 5120 + 5120 * 4096 + 4096 * 4096
    report = account(str(write_config({"model_type": "nemotron_h_omni"})))
    assert (report.components.vision, report.components.projector, report.components.audio) == (vision, projector, 0)
    assert report.total_params == text + vision + projector == 2_659_803_008


def test_nemotron_h_omni_radio_tower_with_a_swiglu_ffn_by_hand():
    # mlp_ratio 3 on 32: 96, SwiGLU two thirds of it rounded up to a multiple of 8: 64 (gate, up, down biased)
    block = (32 * 96 + 96) + (32 * 32 + 32) + 2 * (32 * 64 + 64) + (64 * 32 + 32) + 4 * 32 + 2 * 32
    # embedders over 3 · 4² and 2 · 3 · 4² values, an 8 × 8 grid (32 / 4), 1 class and 2 register tokens
    vision = 2 * block + 48 * 32 + 96 * 32 + 64 * 32 + 3 * 32
    assert account(SYNTHETIC).components.vision == vision == 28_192


def test_nemotron_h_omni_projectors_and_the_norm_its_mtp_layers_bring_by_hand():
    report = account(SYNTHETIC)
    # the vision projector (RMSNorm over 4 · 32, 128 → 96 → 64) and embed_audio (RMSNorm over 32, 32 → 48 → 64,
    # biased as projection_bias says)
    assert report.components.projector == (128 + 128 * 96 + 96 * 64) + (32 + (32 * 48 + 48) + (48 * 64 + 64))
    # num_nextn_predict_layers 1 adds vision_final_layernorm (a LayerNorm over 32) to the norms, beside the language
    # model's: one RMSNorm a layer (4 × 64), norm_f, and the Mamba mixer's gated RMSNorm over its 8 · 16 inner width
    assert report.components.norm == 2 * 32 + 4 * 64 + 64 + 8 * 16


def test_nemotron_h_omni_never_ties_its_head():
    # text_config's tie_word_embeddings true: NemotronHForCausalLM, built whole, still keeps a head of its own
    assert account(SYNTHETIC).components.lm_head == 320 * 64


def test_a_nemotron_h_omni_tower_without_the_wrappers_video_patch_is_refused(write_config):
    config = {"model_type": "nemotron_h_omni", "vision_config": {"model_type": "radio"}}  # its video patch: null
    with pytest.raises(InvalidConfigError, match="video_temporal_patch_size"):
        account(str(write_config(config)))
