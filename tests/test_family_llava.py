"""LLaVA and LLaVA-NeXT: a CLIP tower (or any tower transformers' AutoModel builds), a two-layer projector and any
language model; LLaVA-NeXT adds a learned image_newline and reads an image as tiles.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__llava*.json, defaults__llava.json, defaults__llava_next.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
LLAVA = str(CONFIGS / "synthetic__llava.json")
LLAVA_NEXT = str(CONFIGS / "synthetic__llava_next.json")

# the CLIP tower of both configs: 48 wide, 4 heads of 12, FFN 80, 2 layers, patches of 14 px at 112 px (8 × 8)
CLIP_LAYER = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
CLIP_TOWER = 48 + 48 * 3 * 14 * 14 + (64 + 1) * 48 + 2 * 2 * 48 + 2 * CLIP_LAYER  # class token, conv, positions, LNs


def test_llava_counts_clip_and_a_projector_over_two_feature_layers_by_hand():
    report = account(LLAVA)
    # Llama: hidden 64, 2 layers of 4 heads (2 KV) of 16, MLP 96, vocabulary 1,000, untied
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 2 * 1000 * 64 + 64
    assert report.components.vision == CLIP_TOWER
    # vision_feature_layer [-2, -1]: linear_1 reads two layers' features side by side (96 → 64), linear_2 64 → 64
    assert report.components.projector == (96 * 64 + 64) + (64 * 64 + 64)


def test_llava_ties_the_head_when_its_language_model_does(write_config):
    # LlavaConfig.__post_init__: tie_word_embeddings (false) turns true when text_config's is (Qwen2 here): no
    # lm_head; a SigLIP tower (AutoModel builds it with its attention-pooling head) and a projector without biases
    report = account(str(CONFIGS / "synthetic__llava_tied_text.json"))
    assert report.components.lm_head == 0
    assert report.components.projector == 32 * 64 + 64 * 64


def test_one_image_through_llavas_clip_tower_by_hand():
    # CLIPImageProcessor: shortest edge to 112, centre crop 112 × 112: 8 × 8 = 64 patches, the layers carry them and
    # the class token (65); "full" keeps all 65 features for the projector
    image = flops(LLAVA, image="640x480").image
    carried, layers, width, inner, heads, head_dim = 65, 2, 48, 80, 4, 12
    assert (image.resized_width, image.patches, image.image_tokens) == (112, 64, 65)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * 64
    assert image.attention_projections == layers * 2 * (4 * width * width) * carried
    assert image.ffn == layers * 2 * (2 * width * inner) * carried
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * carried * carried
    assert image.projector == 2 * (96 * 64 + 64 * 64) * 65


def test_llava_next_adds_image_newline_and_counts_one_tile():
    report = account(LLAVA_NEXT)
    assert report.components.vision == CLIP_TOWER
    # one feature layer (-2): linear_1 48 → 64, linear_2 64 → 64, with biases; image_newline: one vector of 64
    assert report.components.projector == (48 * 64 + 64) + (64 * 64 + 64)
    assert report.components.other == 64
    # each tile is a 112 × 112 crop; "default" drops the class token's feature: 64 tokens a tile
    image = flops(LLAVA_NEXT, image="1000x500").image
    assert image.per_tile and (image.patches, image.image_tokens) == (64, 64)
    assert image.projector == 2 * (48 * 64 + 64 * 64) * 64
