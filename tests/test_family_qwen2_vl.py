"""Qwen2-VL: Qwen2.5-VL's wrapper and language model around its own tower (LayerNorm blocks, a plain FFN, no windows).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__qwen2_vl*.json, defaults__qwen2_vl.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

QWEN2_VL = str(ROOT / "tests" / "configs" / "synthetic__qwen2_vl.json")


def test_qwen2_vl_counts_its_tower_and_merger_by_hand():
    report = account(QWEN2_VL)
    # the language model from the top-level keys: hidden 64, 2 layers of 4 heads (2 KV) of 16, q/k/v biases, MLP 96,
    # vocabulary 1,000, untied
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 2 * 1000 * 64 + 64
    # the tower: a 2 × 14 × 14 patch convolution of 3 channels into 48 (no bias); 2 blocks of fused qkv 48 → 144 and
    # proj 48 → 48, fc1 48 → 144 (mlp_ratio 3) and fc2 back, all with biases, two LayerNorms with biases
    block = (48 * 144 + 144) + (48 * 48 + 48) + (48 * 144 + 144) + (144 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == 48 * 3 * 2 * 14 * 14 + 2 * block
    # the merger: LayerNorm ln_q (48), 2 × 2 patches side by side (192) through mlp.0 192 → 192, mlp.2 192 → 64
    assert report.components.projector == 2 * 48 + (192 * 192 + 192) + (192 * 64 + 64)


def test_one_image_through_qwen2_vls_tower_by_hand():
    # smart_resize (image_processing_qwen2_vl.py): each side to a multiple of 14 · 2 = 28 px: 1024 → 1036, 768 → 756;
    # 74 × 54 = 3,996 patches, merged 2 × 2 into 37 × 27 = 999 tokens. Every block attends over the whole image.
    image = flops(QWEN2_VL, image="1024x768").image
    patches, tokens, blocks, width, inner, heads, head_dim = 3996, 999, 2, 48, 144, 4, 12
    assert (image.resized_width, image.resized_height) == (1036, 756)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * width) * patches
    assert image.attention_projections == blocks * 2 * (width * 3 * width + width * width) * patches
    assert image.ffn == blocks * 2 * (2 * width * inner) * patches
    assert image.attention_scores == blocks * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (192 * 192 + 192 * 64) * tokens
