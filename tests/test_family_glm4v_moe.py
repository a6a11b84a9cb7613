"""GLM-4.5V: GLM-4.1V's wrapper and tower around a GLM-4.5 language model (no q/k norms, no multi-token-prediction
layers).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__glm4v_moe.json, defaults__glm4v_moe.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

GLM4V_MOE = str(ROOT / "tests" / "configs" / "synthetic__glm4v_moe.json")


def test_glm4v_moe_counts_its_experts_tower_and_merger_by_hand():
    report = account(GLM4V_MOE)
    # attention: 4 heads of 24 (its head_dim), 2 KV heads, no biases: q 64 → 96, k and v 64 → 48, o 96 → 64
    attention = 64 * 96 + 2 * 64 * 48 + 96 * 64
    # layer 0 dense (gate, up, down 64 ↔ 96); layers 1-2: 4 experts and one shared of 32 (gate, up, down), router 4 × 64
    expert = 3 * 64 * 32
    dense, sparse = 3 * 64 * 96, 4 * expert + expert + 4 * 64
    text = 3 * attention + dense + 2 * sparse + 3 * 2 * 64 + 64 + 2 * 1000 * 64  # norms, final norm, untied
    assert report.language_model_params == text
    # a text token runs 2 of each sparse layer's 4 experts
    assert report.active_params == text - 2 * 2 * expert
    # the tower: a biased 1 × 14 × 14 convolution into 32, post_conv_layernorm, 4 × 4 positions (56 / 14), one block
    # (qkv 32 → 96 and proj without biases, gate and up 32 → 64, down, two RMSNorms), post_layernorm, downsample
    # (a biased 2 × 2 convolution of 32 channels into 64)
    block = 32 * 96 + 32 * 32 + 3 * 32 * 64 + 2 * 32
    assert report.components.vision == (32 * 3 * 14 * 14 + 32) + 32 + 16 * 32 + block + 32 + (64 * 32 * 4 + 64)
    # the merger: proj 64 → 64, a LayerNorm with bias, gate and up 64 → 48, down 48 → 64
    assert report.components.projector == 64 * 64 + 2 * 64 + 2 * 64 * 48 + 48 * 64


def test_one_image_through_glm4v_moes_tower_by_hand():
    # smart_resize (image_processing_glm4v.py, one frame): each side to the nearest multiple of 28: 640 → 644,
    # 480 → 476; 46 × 34 = 1,564 patches, merged 2 × 2 into 23 × 17 = 391 tokens
    image = flops(GLM4V_MOE, image="640x480").image
    patches, tokens, width, heads, head_dim = 1564, 391, 32, 2, 16
    assert (image.resized_width, image.resized_height) == (644, 476)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * patches
    assert image.attention_projections == 2 * (width * 3 * width + width * width) * patches
    assert image.ffn == 2 * (3 * width * 64) * patches
    assert image.attention_scores == 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (32 * 4 * 64 + 64 * 64 + 2 * 64 * 48 + 48 * 64) * tokens
