"""Video-LLaVA: two CLIP towers built alike from vision_config (image_tower for images, video_tower for videos),
LLaVA's projector, a Llama language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__video_llava.json: 328,320; defaults__video_llava.json: 7,365,754,880).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

VIDEO_LLAVA = str(ROOT / "tests" / "configs" / "synthetic__video_llava.json")

# CLIP: 48 wide, FFN 80, patches of 14 px at 56 px (16 patches and the class token)
CLIP_LAYER = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
CLIP = 48 + 48 * 3 * 14 * 14 + 17 * 48 + 2 * 48 + 2 * CLIP_LAYER + 2 * 48  # class, patches, positions, norms


def test_both_towers_count_as_the_vision_tower():
    assert account(VIDEO_LLAVA).components.vision == 2 * CLIP


def test_the_projector_reads_two_feature_layers_side_by_side():
    # vision_feature_layer [-2, -1]: linear_1 2 · 48 → 64, linear_2 64 → 64, both biased
    assert account(VIDEO_LLAVA).components.projector == (96 * 64 + 64) + (64 * 64 + 64)


def test_the_wrappers_flag_alone_leaves_it_untied():
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64  # Llama, GQA
    assert account(VIDEO_LLAVA).language_model_params == 2 * layer + 64 + 2 * 1000 * 64


def test_an_image_runs_the_image_tower_only():
    image = flops(VIDEO_LLAVA, image="640x480").image
    # resized and cropped to 56 px: 16 patches, 17 rows through the layers; the default strategy drops the class token
    assert (image.patches, image.image_tokens) == (16, 16)
    assert image.patch_embedding == 2 * (48 * 3 * 14 * 14) * 16
    assert image.attention_projections == 2 * 2 * (4 * 48 * 48) * 17
    assert image.ffn == 2 * 2 * (2 * 48 * 80) * 17
    assert image.projector == 2 * (96 * 64 + 64 * 64) * 16
