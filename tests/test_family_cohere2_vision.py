"""Command A Vision (cohere2_vision): a SigLIP tower over tiles, a pixel-shuffle projector with a SwiGLU and no
LayerNorm, a Cohere 2 language model, laid out as transformers builds it.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__cohere2_vision.json: 340,020; defaults__cohere2_vision.json:
35,651,000,064).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

COHERE2_VISION = str(ROOT / "tests" / "configs" / "synthetic__cohere2_vision.json")


def test_cohere2_vision_counts_its_tower_and_swiglu_projector_by_hand():
    report = account(COHERE2_VISION)
    # Cohere 2: hidden 64, 4 layers of 4 heads (2 KV) of 16, MLP 96, one LayerNorm a layer; vocabulary 1,000, untied
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 64
    assert report.language_model_params == 4 * layer + 64 + 2 * 1000 * 64
    # SigLIP without its head: a biased 14 × 14 convolution into 48, 8 × 8 positions, 2 layers, post_layernorm
    siglip_layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * siglip_layer + 2 * 48
    # 2 × 2 patches side by side (192), linear_1 192 → 100, the SwiGLU halves it, linear_2 50 → 64, both biased
    assert report.components.projector == (192 * 100 + 100) + (50 * 64 + 64)


def test_one_tile_through_command_a_visions_tower_by_hand():
    # tiles of the tower's image_size (112 px): 8 × 8 patches of 14 px, pixel-shuffled 2 × 2 into 16 tokens
    image = flops(COHERE2_VISION, image="1000x700").image
    assert image.per_tile and (image.patches, image.image_tokens) == (64, 16)
    assert image.projector == 2 * (192 * 100 + 50 * 64) * 16
