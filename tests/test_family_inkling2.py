"""Inkling 2 and Inkling 2 Loop as vision-language models: the text models (test_family_inkling2_text.py,
test_family_inkling2_loop_text.py) with a layer-scaled ViT whose merger projects four patches into the text width.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__inkling2.json, defaults__inkling2_loop.json, synthetic__inkling2.json,
synthetic__inkling2_loop.json).
"""

import json
from pathlib import Path

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

SYNTHETIC = "tests/configs/synthetic__inkling2.json"


def vision_tower(hidden, layers, mlp, patch_values, grid, merged, projection, text, bias=False):
    """Inkling2VisionModel by hand: per layer biased q, k, v, out_proj, a biased MLP, two LayerNorms with biases and
    two layer scales; the patch linear, the position table, the class token and its position, ln_pre, the merger."""
    layer = 4 * (hidden * hidden + hidden) + (2 * hidden * mlp + mlp + hidden) + 4 * hidden + 2 * hidden
    embeddings = patch_values * hidden + grid * grid * hidden + 2 * hidden + 2 * hidden
    merger = merged * hidden * projection + projection * text + (projection + text if bias else 0)
    return layers * layer + embeddings + merger


def test_inkling2_default_model_by_hand(write_config):
    # Inkling2VisionConfig(): 1,024 wide, 23 layers, an MLP of 4 · 1,024, patches of 3 · 20², a grid of 32², merging
    # 2 × 2 patches through 4,096 into 4,608; the text model is Inkling 2's default, 593,718,478,848
    # (test_family_inkling2_text.py)
    tower = vision_tower(1024, 23, 4096, 1200, 32, 4, 4096, 4608)
    report = account(str(write_config({"model_type": "inkling2"})))
    assert report.total_params == 593_718_478_848 + tower == 594_046_172_160
    assert report.components.vision == tower


def test_inkling2_loop_default_model_by_hand(write_config):
    # Inkling2LoopConfig's default tower projects into 2,304; the text model is Inkling 2 Loop's default,
    # 26,068,156,416 (test_family_inkling2_loop_text.py)
    tower = vision_tower(1024, 23, 4096, 1200, 32, 4, 4096, 2304)
    report = account(str(write_config({"model_type": "inkling2_loop"})))
    assert report.total_params == 26_068_156_416 + tower == 26_386_412_544


def test_inkling2_synthetic_by_hand():
    # a tower of 32, 2 layers, MLP 64, patches of 3 · 4², a grid of 6², merging 4 patches through 48 into 64; the
    # text model is tests/configs/synthetic__inkling2_text.json's, 266,784
    assert account(SYNTHETIC).total_params == 266_784 + vision_tower(32, 2, 64, 48, 6, 4, 48, 64) == 296_032


def test_inkling2_saves_the_tower_and_the_text_model_under_the_original_names():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["model.visual.backbone.embeddings.position_embedding"] == (36, 32)
    assert tensors["model.visual.backbone.layers.1.ls_2.gamma"] == (32,)
    assert tensors["model.visual.proj_in.weight"] == (48, 128)
    assert tensors["model.llm.unembed.weight"] == (320, 64)  # 300 rows, saved padded to vocab_size
    assert tensors["model.llm.attn_res.output_query"] == (64,)


def test_inkling2_refuses_a_tower_projecting_into_another_width(write_config):
    config = json.loads(Path(SYNTHETIC).read_text())
    config["vision_config"]["text_hidden_size"] = 32
    with pytest.raises(InvalidConfigError, match=r"text_hidden_size \(32\) must match text_config.hidden_size \(64\)"):
        account(str(write_config(config)))


def test_inkling2_image_is_padded_to_whole_merged_patches_and_carries_a_class_token():
    # 100 × 60 px, patches of 4 merged 2 × 2: padded (never scaled) to 104 × 64, 26 × 16 = 416 patches, 104 tokens;
    # the layers carry 417 (the class token): per layer q, k, v, o 2 · 417 · 4 · 32², the MLP 2 · 417 · 2 · 32 · 64,
    # scores 2 · 2 heads · (16 + 16) · 417² over the whole image; the patch linear 2 · 416 · 48 · 32; the merger
    # 2 · 104 · (128 · 48 + 48 · 64)
    image = flops(SYNTHETIC, 1, image="100x60").image
    assert (image.resized_width, image.resized_height, image.patches, image.image_tokens) == (104, 64, 416, 104)
    assert image.attention_projections == 2 * 2 * 417 * 4 * 32 * 32
    assert image.ffn == 2 * 2 * 417 * 2 * 32 * 64
    assert image.attention_scores == 2 * 2 * 2 * (16 + 16) * 417 * 417
    assert image.patch_embedding == 2 * 416 * 48 * 32
    assert image.projector == 2 * 104 * (128 * 48 + 48 * 64)
