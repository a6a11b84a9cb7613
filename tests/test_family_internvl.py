"""InternVL: InternViT (class token, layer scales), a pixel-shuffle projector with a LayerNorm, a Qwen2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__internvl*.json, defaults__internvl.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

INTERNVL = str(ROOT / "tests" / "configs" / "synthetic__internvl.json")


def test_internvl_counts_internvit_and_its_projector_by_hand():
    report = account(INTERNVL)
    # Qwen2: hidden 64, 2 layers of 4 heads (2 KV) of 16, q/k/v biases, MLP 96, vocabulary 1,000; the wrapper's
    # tie_word_embeddings (default true) ties the head whatever text_config says
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 1000 * 64 + 64
    # InternViT: the class token, a biased 14 × 14 patch convolution into 48, 8 × 8 + 1 positions; per layer q, k, v
    # without biases, projection_layer with one, fc1 48 → 80 and fc2 with biases, two LayerNorms, lambda_1 and
    # lambda_2; no final LayerNorm (use_mean_pooling)
    layer = 3 * 48 * 48 + (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48 + 2 * 48
    assert report.components.vision == 48 + (48 * 3 * 14 * 14 + 48) + 65 * 48 + 2 * layer
    # downsample_ratio 0.5: 2 × 2 patches side by side (192), a LayerNorm over them, 192 → 64 and 64 → 64, biased
    assert report.components.projector == 2 * 192 + (192 * 64 + 64) + (64 * 64 + 64)


def test_one_tile_through_internvit_by_hand():
    # a tile of 112 px: 8 × 8 patches of 14 px, carried with the class token (65) through the layers; the class token
    # dropped, the pixel shuffle merges 2 × 2 patches: 16 tokens
    image = flops(INTERNVL, image="1000x700").image
    carried, layers, width, inner, heads, head_dim = 65, 2, 48, 80, 4, 12
    assert image.per_tile and (image.patches, image.image_tokens) == (64, 16)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * 64
    assert image.attention_projections == layers * 2 * (4 * width * width) * carried
    assert image.ffn == layers * 2 * (2 * width * inner) * carried
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * carried * carried
    assert image.projector == 2 * (192 * 64 + 64 * 64) * 16
