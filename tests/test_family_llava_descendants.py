"""LLaVA-OneVision, LLaVA-NeXT-Video and ViP-LLaVA: LLaVA-NeXT's and LLaVA's wrappers with a SigLIP tower by default, a
convolutional video pooler, and a LayerNorm over several feature layers.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__llava_onevision.json: 202,704; synthetic__llava_next_video.json: 271,240;
synthetic__vipllava.json: 269,888; and the default models, defaults__*.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
ONEVISION = str(CONFIGS / "synthetic__llava_onevision.json")
NEXT_VIDEO = str(CONFIGS / "synthetic__llava_next_video.json")
VIPLLAVA = str(CONFIGS / "synthetic__vipllava.json")

# the towers: 48 wide, 4 heads of 12, FFN 80, 2 layers, patches of 14 px at 112 px (8 × 8 = 64 patches)
VIT_LAYER = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
# SigLIP: a biased patch convolution, a position per patch, post_layernorm (no class token, no head)
SIGLIP_TOWER = (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * 48 + 2 * VIT_LAYER
# CLIP: a class token, an unbiased convolution, positions for 64 patches and the class token, two LayerNorms
CLIP_TOWER = 48 + 48 * 3 * 14 * 14 + (64 + 1) * 48 + 2 * 2 * 48 + 2 * VIT_LAYER


def test_llava_onevision_counts_a_siglip_tower_a_projector_and_image_newline_by_hand():
    report = account(ONEVISION)
    # Qwen2: hidden 64, 2 layers of 4 heads (2 KV) of 16 with q/k/v biases, MLP 96, vocabulary 1,000, tied (its
    # text_config's tie_word_embeddings turns the wrapper's true)
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.components.lm_head == 0
    # image_newline (64) counts outside the towers and projector, with the language model's side
    assert report.language_model_params == 2 * layer + 1000 * 64 + 64 + 64
    assert report.components.vision == SIGLIP_TOWER
    # vision_feature_layer [-2, -1]: linear_1 96 → 64, linear_2 64 → 64, biased; image_newline: 64
    assert report.components.projector == (96 * 64 + 64) + (64 * 64 + 64)
    assert report.components.other == 64


def test_one_tile_through_llava_onevisions_tower_by_hand():
    # anyres: tiles of 112 px; "full" keeps every feature of SigLIP (no class token): 64 tokens a tile
    image = flops(ONEVISION, image="1000x500").image
    assert image.per_tile and (image.patches, image.image_tokens) == (64, 64)
    assert image.projector == 2 * (96 * 64 + 64 * 64) * 64


def test_llava_next_video_counts_its_convolutional_pooler_apart_from_an_images_flops():
    report = account(NEXT_VIDEO)
    assert report.components.vision == CLIP_TOWER
    assert report.components.projector == (48 * 64 + 64) + (64 * 64 + 64)
    # image_newline (64) and the "conv" pooler: 2 × 2 over 48 channels into spatial_pool_out_channels 40, biased
    assert report.components.other == 64 + (40 * 48 * 2 * 2 + 40)
    # an image runs the tower and projector only: 64 patches and the class token, the class token's feature dropped
    image = flops(NEXT_VIDEO, image="640x480").image
    assert (image.patches, image.image_tokens) == (64, 64)
    assert image.projector == 2 * (48 * 64 + 64 * 64) * 64


def test_vipllava_normalizes_three_feature_layers_side_by_side_by_hand():
    report = account(VIPLLAVA)
    assert report.components.vision == CLIP_TOWER
    # vision_feature_layers [-2, -1, 1]: 3 × 48 = 144 wide; projector_layernorm (weight and bias), linear_1 144 → 64,
    # linear_2 64 → 64, all biased
    assert report.components.projector == 2 * 144 + (144 * 64 + 64) + (64 * 64 + 64)
    # untied: only the wrapper's tie_word_embeddings (default false) decides
    assert report.components.lm_head == 1000 * 64


def test_one_image_through_vipllavas_tower_drops_the_class_token():
    # CLIPImageProcessor: 112 × 112, 64 patches; the layers carry the class token too (65); every feature layer is
    # read without it: 64 tokens through the projector
    image = flops(VIPLLAVA, image="640x480").image
    assert (image.patches, image.image_tokens) == (64, 64)
    assert image.attention_scores == 2 * 2 * 4 * (12 + 12) * 65 * 65
    assert image.projector == 2 * (144 * 64 + 64 * 64) * 64
