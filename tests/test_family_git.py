"""GIT: a CLIP vision tower whose projected image tokens lead a causal decoder of BERT layers.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__git.json, synthetic__git.json) and FlopCounterMode counts the same text-only
forward (tests/expected/flop_counter.json, synthetic__git).
"""

from ffncalc import account, flops

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__git.json")


def test_git_default_model_by_hand(write_config):
    # GitConfig(): 6 BERT layers of 768 (q, k, v, o biased; 768 ↔ 3,072 biased; 2 LayerNorms), word table 30,522
    # and 1,024 positions with a LayerNorm, an untied output with bias.
    h = 768
    layer = 4 * (h * h + h) + 2 * h * 3072 + 3072 + h + 2 * 2 * h
    text = 6 * layer + 30522 * h + 1024 * h + 2 * h + 30522 * h + 30522
    # GitVisionConfig(): CLIP's ViT-B/16 at 224: 12 layers, 196 patches and a class token.
    vision_layer = 4 * (h * h + h) + 2 * h * 3072 + 3072 + h + 2 * 2 * h
    vision = 12 * vision_layer + h + 3 * 16 * 16 * h + 197 * h + 2 * 2 * h
    projector = h * h + h + 2 * h
    report = account(str(write_config({"model_type": "git"})))
    assert (report.components.vision, report.components.projector) == (vision, projector)
    assert report.total_params == text + vision + projector == 176_619_066


def test_git_tied_output_keeps_its_bias():
    # tie_word_embeddings: output's weight is the word table; its bias, 320, stays the head's own
    assert account(SYNTHETIC).components.lm_head == 320


def test_git_projector_holds_one_vector_per_frame():
    # num_image_with_embedding 2: two [1, 1, 32] vectors, then visual_projection 32 → 64 with bias and a LayerNorm
    assert account(SYNTHETIC).components.projector == 2 * 32 + 32 * 64 + 64 + 2 * 64


def test_git_image_becomes_its_patches_and_class_token():
    # 32 × 32 pixels in patches of 8: 16 patches and the class token, all 17 projected (2 · 17 · 32 · 64 FLOPs)
    report = flops(SYNTHETIC, image="32x32").image
    assert (report.image_tokens, report.projector) == (17, 2 * 17 * 32 * 64)
