"""GLM-4.1V: a GLM-4 language model around the GLM-4.1V vision encoder (RMSNorm blocks whose FFN is out_hidden_size
wide, a convolution merging 2 × 2 patches, a gated merger), in Qwen3-VL's layout.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__glm4v.json, defaults__glm4v.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

GLM4V = str(ROOT / "tests" / "configs" / "synthetic__glm4v.json")


def test_glm4v_counts_its_tower_downsample_and_merger_by_hand():
    report = account(GLM4V)
    # GLM-4: hidden 64, 2 layers of 4 heads (2 KV) of 16, q/k/v biases (o none), gate_up 64 → 192, down 96 → 64,
    # four RMSNorms a layer; vocabulary 1,000, tied by text_config's tie_word_embeddings
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 4 * 64
    assert report.language_model_params == 2 * layer + 1000 * 64 + 64
    # the tower: a biased 2 × 14 × 14 patch convolution of 3 channels into 48, post_conv_layernorm, 8 × 8 positions,
    # 2 blocks (qkv 48 → 144 with bias, proj 48 → 48 without; gate and up 48 → 64, down 64 → 48, no biases; two
    # RMSNorms), post_layernorm, and downsample: a biased 2 × 2 convolution of 48 channels into 64
    block = (48 * 144 + 144) + 48 * 48 + 3 * 48 * 64 + 2 * 48
    patch_embed = 48 * 3 * 2 * 14 * 14 + 48
    assert report.components.vision == patch_embed + 48 + 64 * 48 + 2 * block + 48 + (64 * 48 * 2 * 2 + 64)
    # the merger: proj 64 → 64, a LayerNorm with bias, gate and up 64 → 80, down 80 → 64, no biases
    assert report.components.projector == 64 * 64 + 2 * 64 + 2 * 64 * 80 + 80 * 64


def test_one_image_through_glm4vs_tower_by_hand():
    # Glm4vImageProcessor's smart_resize: each side to the nearest multiple of 14 · 2 = 28 px: 1024 → 1036, 768 → 756
    # (2 frames · 1036 · 756 = 1,566,432 px, within its 12,544 and 11,760,000); 74 × 54 = 3,996 patches, merged
    # 2 × 2 into 37 × 27 = 999 tokens. Every block attends over the whole image.
    image = flops(GLM4V, image="1024x768").image
    patches, tokens, blocks, width, heads, head_dim = 3996, 999, 2, 48, 4, 12
    assert (image.resized_width, image.resized_height) == (1036, 756)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * width) * patches
    assert image.attention_projections == blocks * 2 * (width * 3 * width + width * width) * patches
    assert image.ffn == blocks * 2 * (3 * width * 64) * patches
    assert image.attention_scores == blocks * 2 * heads * (head_dim + head_dim) * patches * patches
    # per token: downsample (48 · 2 · 2 → 64) and the merger (64 → 64, 64 → 2 · 80, 80 → 64)
    assert image.projector == 2 * (48 * 4 * 64 + 64 * 64 + 2 * 64 * 80 + 80 * 64) * tokens
