"""GLM-4.6V: the GLM-V tower and any language model AutoModel builds (GLM-4.1V's by default), tied by the wrapper's
own flag only.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__glm46v.json, defaults__glm46v.json).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

GLM46V = str(ROOT / "tests" / "configs" / "synthetic__glm46v.json")


def test_glm46v_counts_a_glm45v_language_model_untied_by_hand():
    report = account(GLM46V)
    # attention: 4 heads of 16, one KV head, q/k/v biases (attention_bias defaults to true), o without
    attention = (64 * 64 + 64) + 2 * (64 * 16 + 16) + 64 * 64
    # every layer sparse (first_k_dense_replace 0): 3 experts of 16, 2 shared (one MLP of 32), router 3 × 64
    ffn = 3 * (3 * 64 * 16) + 3 * 64 * 32 + 3 * 64
    # text_config's tie_word_embeddings does not tie GLM-4.6V: the embedding and the head, 1,000 × 64 each
    assert report.language_model_params == 2 * (attention + ffn + 2 * 64) + 64 + 2 * 1000 * 64
    # the tower: a biased 2 × 14 × 14 convolution into 32, post_conv_layernorm, 6 × 6 positions (84 / 14), one block
    # (qkv 32 → 96 and proj, gate and up 32 → 64, down, no biases; two RMSNorms), post_layernorm, downsample (a biased
    # 3 × 3 convolution of 32 channels into 64)
    block = 32 * 96 + 32 * 32 + 3 * 32 * 64 + 2 * 32
    assert report.components.vision == (32 * 3 * 2 * 14 * 14 + 32) + 32 + 36 * 32 + block + 32 + (64 * 32 * 9 + 64)
    # the merger: proj 64 → 64, a LayerNorm with bias, gate and up 64 → 40, down 40 → 64
    assert report.components.projector == 64 * 64 + 2 * 64 + 2 * 64 * 40 + 40 * 64


def test_one_image_through_glm46vs_tower_by_hand():
    # Glm46VImageProcessor's smart_resize: each side to the nearest multiple of 14 · 3 = 42: 1000 → 1008, 700 → 714;
    # 72 × 51 = 3,672 patches, merged 3 × 3 into 24 × 17 = 408 tokens
    image = flops(GLM46V, image="1000x700").image
    patches, tokens, width, heads, head_dim = 3672, 408, 32, 4, 8
    assert (image.resized_width, image.resized_height) == (1008, 714)
    assert (image.patches, image.image_tokens) == (patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * width) * patches
    assert image.attention_projections == 2 * (width * 3 * width + width * width) * patches
    assert image.ffn == 2 * (3 * width * 64) * patches
    assert image.attention_scores == 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (32 * 9 * 64 + 64 * 64 + 2 * 64 * 40 + 40 * 64) * tokens
