"""Idefics3 and SmolVLM: a SigLIP-shaped tower over tiles, a pixel-shuffle connector, any language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__idefics3.json, synthetic__smolvlm.json, defaults__idefics3.json,
defaults__smolvlm.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
IDEFICS3 = str(CONFIGS / "synthetic__idefics3.json")


def test_idefics3_counts_its_tower_and_connector_by_hand():
    report = account(IDEFICS3)
    # Llama: hidden 64, 2 layers of 4 heads (2 KV) of 16, MLP 96, vocabulary 1,000, untied
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 2 * 1000 * 64 + 64
    # the tower: a biased 14 × 14 patch convolution into 48, 8 × 8 positions (112 / 14), 2 LayerNorm layers with
    # biases (q, k, v, out_proj; fc1 48 → 80, fc2), post_layernorm; no class token, no pooling head
    layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * 48 + 2 * layer
    # the connector: 2 × 2 patches side by side (192) through modality_projection.proj into 64, no bias
    assert report.components.projector == 192 * 64


def test_smolvlm_ties_by_the_wrappers_flag_not_its_language_models():
    # text_config says tie_word_embeddings true; SmolVLMConfig's own (absent: false) decides: the head is its own
    report = account(str(CONFIGS / "synthetic__smolvlm.json"))
    assert report.components.lm_head == 1000 * 64
    # scale_factor 4: 16 patches of 32 side by side (512) into 64
    assert report.components.projector == 512 * 64


def test_one_tile_through_idefics3s_tower_by_hand():
    # the image processor cuts tiles of the tower's image_size (112 px): 8 × 8 patches of 14 px a tile, pixel-shuffled
    # 2 × 2 into 16 tokens; ffncalc counts one tile
    image = flops(IDEFICS3, image="1000x700").image
    patches, tokens, layers, width, inner, heads, head_dim = 64, 16, 2, 48, 80, 4, 12
    assert image.per_tile and (image.resized_width, image.patches, image.image_tokens) == (112, patches, tokens)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * patches
    assert image.attention_projections == layers * 2 * (4 * width * width) * patches
    assert image.ffn == layers * 2 * (2 * width * inner) * patches
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * 192 * 64 * tokens
