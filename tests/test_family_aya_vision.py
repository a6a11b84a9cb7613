"""Aya Vision: a SigLIP tower over tiles, a pixel-shuffle projector with a SwiGLU, a Cohere 2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__aya_vision.json) and refuses the default model
(defaults__aya_vision.json: SigLIP's 1152 over 14 heads).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

AYA_VISION = str(ROOT / "tests" / "configs" / "synthetic__aya_vision.json")


def test_aya_vision_counts_its_siglip_tower_and_swiglu_projector_by_hand():
    report = account(AYA_VISION)
    # Cohere 2: hidden 64, 4 layers of 4 heads (2 KV) of 16, no biases, MLP 96, one LayerNorm (no bias) a layer;
    # vocabulary 1,000, tied by the wrapper's default
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 64
    assert report.language_model_params == 4 * layer + 64 + 1000 * 64
    # SigLIP: a biased 14 × 14 convolution into 48, 8 × 8 positions (112 / 14), 2 layers (q, k, v, out_proj with
    # biases; fc1 48 → 80, fc2; two LayerNorms with biases), post_layernorm, and the pooling head (probe, in_proj
    # 48 → 144 with bias, out_proj, a LayerNorm, fc1, fc2)
    siglip_layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    head = 48 + (144 * 48 + 144) + (48 * 48 + 48) + 2 * 48 + (48 * 80 + 80) + (80 * 48 + 48)
    assert report.components.vision == (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * siglip_layer + 2 * 48 + head
    # the projector: 2 × 2 patches side by side (192), a LayerNorm with bias, linear_1 192 → 128, the SwiGLU halves
    # it, linear_2 64 → 64, both biased
    assert report.components.projector == 2 * 192 + (192 * 128 + 128) + (64 * 64 + 64)


def test_one_tile_through_aya_visions_tower_by_hand():
    # GotOcr2ImageProcessor cuts tiles of the tower's image_size (112 px): 8 × 8 patches of 14 px, pixel-shuffled
    # 2 × 2 into 16 tokens; ffncalc counts one tile. The pooling head feeds no language model: no FLOPs counted.
    image = flops(AYA_VISION, image="1000x700").image
    patches, tokens, layers, width, inner, heads, head_dim = 64, 16, 2, 48, 80, 4, 12
    assert image.per_tile and (image.resized_width, image.patches, image.image_tokens) == (112, patches, tokens)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * patches
    assert image.attention_projections == layers * 2 * (4 * width * width) * patches
    assert image.ffn == layers * 2 * (2 * width * inner) * patches
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (192 * 128 + 64 * 64) * tokens


def test_aya_visions_default_model_is_refused_as_transformers_refuses_it(write_config):
    # AyaVisionConfig's default tower is SigLIP with hidden_size 1152 over 14 heads: SiglipAttention raises
    with pytest.raises(InvalidConfigError, match=r"vision_config: hidden_size \(1152\) is not a multiple"):
        account(str(write_config({"model_type": "aya_vision"})))
