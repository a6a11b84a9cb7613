"""Cosmos3-Omni (Cosmos3-Nano's reasoner): Qwen3-VL's wrapper, tower and language model unchanged.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__cosmos3_omni.json: 12,616,410,352; synthetic__cosmos3_omni.json: 200,480).
"""

from ffncalc import account

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__cosmos3_omni.json")


def test_the_default_cosmos3_omni_by_hand(write_config):
    # Qwen3VLTextConfig: 32 layers of hidden 4096, 32 heads of 128 (q/k RMSNorms over 128), SwiGLU of 22016, two
    # RMSNorms a layer and a final one; a 151,936 × 4096 token table and an untied head (tie_word_embeddings false)
    text_layer = 4 * 4096 * 4096 + 2 * 128 + 3 * 4096 * 22016 + 2 * 4096
    text = 32 * text_layer + 4096 + 2 * 151936 * 4096
    # Qwen3VLVisionConfig: a biased Conv3d over 3 · 2 · 16² pixels into 1152, 2304 learned positions, 27 blocks
    # (two LayerNorms, a biased qkv and proj, fc1 1152 → 4304 and fc2 back, biased)
    block = (
        2 * 2 * 1152 + (1152 * 3 * 1152 + 3 * 1152) + (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152)
    )
    vision = (3 * 2 * 16 * 16 * 1152 + 1152) + 2304 * 1152 + 27 * block
    # the merger (a LayerNorm over 1152, then 4 · 1152 → 4608 → 3584, biased) and three deepstack mergers, whose
    # LayerNorm reads the 4608 merged features
    linears = (4608 * 4608 + 4608) + (4608 * 3584 + 3584)
    projector = (2 * 1152 + linears) + 3 * (2 * 4608 + linears)
    report = account(str(write_config({"model_type": "cosmos3_omni"})))
    assert (report.components.vision, report.components.projector) == (vision, projector)
    assert report.total_params == text + vision + projector == 12_616_410_352


def test_cosmos3_omni_ties_its_head_as_its_top_level_says():
    # the synthetic config's tie_word_embeddings true (Qwen3-VL's wrapper reads the top level): no head of its own
    report = account(SYNTHETIC)
    assert (report.components.embedding, report.components.lm_head) == (320 * 64, 0)


def test_cosmos3_omni_reads_a_tower_of_another_model_type_as_qwen3_vls(write_config):
    # Cosmos3OmniConfig.__post_init__ rewrites vision_config.model_type to qwen3_vl_vision: a SigLIP name is ignored,
    # so the default tower (415,891,440, as in the default model above) is built whatever the block calls itself
    config = {"model_type": "cosmos3_omni", "vision_config": {"model_type": "siglip_vision_model"}}
    assert account(str(write_config(config))).components.vision == 415_891_440
