"""PaliGemma (and PaliGemma 2): a SigLIP tower, one linear into projection_dim, a Gemma or Gemma 2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__paligemma*.json, defaults__paligemma.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

PALIGEMMA = str(ROOT / "tests" / "configs" / "synthetic__paligemma.json")


def test_paligemma_counts_siglip_and_its_linear_projector_by_hand():
    report = account(PALIGEMMA)
    # Gemma: hidden 64, 2 layers of 4 heads of 32 (q 64 → 128), one KV head, MLP 96, vocabulary 1,000, tied
    layer = 64 * 128 + 2 * 64 * 32 + 128 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 1000 * 64 + 64
    # SigLIP, 48 wide, 2 layers, 8 × 8 patches of 14 px: a vision_config given keeps SiglipVisionConfig's
    # vision_use_head (true): the probe, the pooling attention (in_proj 3 · 48 wide), its LayerNorm and MLP
    layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    tower = (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * 48 + 2 * layer
    head = 48 + (3 * 48 * 48 + 3 * 48) + (48 * 48 + 48) + 2 * 48 + (48 * 80 + 80) + (80 * 48 + 48)
    assert report.components.vision == tower + head
    # multi_modal_projector.linear: 48 → projection_dim 64, with bias
    assert report.components.projector == 48 * 64 + 64


def test_one_image_through_paligemmas_siglip_tower_by_hand():
    # SiglipImageProcessor: every image resized to 112 × 112, 8 × 8 patches of 14 px, one token a patch
    image = flops(PALIGEMMA, image="1920x1080").image
    patches, layers, width, inner, heads, head_dim = 64, 2, 48, 80, 4, 12
    assert (image.resized_width, image.resized_height, image.patches, image.image_tokens) == (112, 112, 64, 64)
    assert image.attention_projections == layers * 2 * (4 * width * width) * patches
    assert image.ffn == layers * 2 * (2 * width * inner) * patches
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * 48 * 64 * 64
