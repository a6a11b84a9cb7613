"""DeepSeek-VL: a SigLIP tower, a two-layer aligner over every patch's feature, a Llama language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__deepseek_vl.json: 280,672; defaults__deepseek_vl.json: 6,720,158,976).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

DEEPSEEK_VL = str(ROOT / "tests" / "configs" / "synthetic__deepseek_vl.json")


def test_deepseek_vl_counts_siglip_with_its_head_and_the_aligner_by_hand():
    report = account(DEEPSEEK_VL)
    # SigLIP (vision_use_head left to its default, true): convolution, 8 × 8 positions, 2 layers, post_layernorm and
    # the pooling head (probe, in_proj 48 → 144, out_proj, a LayerNorm, fc1, fc2)
    layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    head = 48 + (144 * 48 + 144) + (48 * 48 + 48) + 2 * 48 + (48 * 80 + 80) + (80 * 48 + 48)
    assert report.components.vision == (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * layer + 2 * 48 + head
    # the aligner: linear1 48 → 64 and linear2 64 → 64, both biased
    assert report.components.projector == (48 * 64 + 64) + (64 * 64 + 64)
    # Llama, untied by the wrapper's flag
    llama_layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * llama_layer + 64 + 2 * 1000 * 64


def test_one_image_through_deepseek_vls_tower_by_hand():
    # padded to a square and resized to 112 px: 8 × 8 patches, each feature aligned (64 tokens); the head feeds
    # nothing to the language model
    image = flops(DEEPSEEK_VL, image="640x480").image
    assert (image.resized_width, image.patches, image.image_tokens) == (112, 64, 64)
    assert image.ffn == 2 * 2 * (2 * 48 * 80) * 64
    assert image.projector == 2 * (48 * 64 + 64 * 64) * 64
