"""GLM-OCR: GLM-4.1V's wrapper around a tower of its own (no position table nor post-convolution norm, q/k RMSNorms
per head, biased MLP, a merger out_hidden_size · in_channels wide) and GLM-4.1V's language model with q, k and v
unbiased.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__glm_ocr.json: 342,000; synthetic__glm_ocr_untied_unbiased.json: 87,520;
defaults__glm_ocr.json: 807,479,808).
"""

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
GLM_OCR = str(CONFIGS / "synthetic__glm_ocr.json")
UNTIED_UNBIASED = str(CONFIGS / "synthetic__glm_ocr_untied_unbiased.json")


def test_glm_ocrs_language_model_has_unbiased_qkv_and_reads_head_dim_by_hand():
    report = account(GLM_OCR)
    # hidden 64, 4 heads of head_dim 24 (a key GlmOcrTextConfig does not declare: read with getattr) → q 96 wide,
    # 2 KV heads → k and v 48 wide, no biases anywhere; o 96 → 64
    assert report.components.attention == 2 * (64 * 96 + 2 * 64 * 48 + 96 * 64)
    # gate_up_proj 64 → 2 · 96, down_proj 96 → 64; four RMSNorms a layer and the final one
    assert report.components.ffn == 2 * (64 * 192 + 96 * 64)
    assert report.components.norm == 2 * 4 * 64 + 64
    # the wrapper's tie_word_embeddings (default false) and text_config silent: the head is its own 900 × 64
    assert report.components.lm_head == 900 * 64


def test_glm_ocrs_tower_and_merger_by_hand():
    report = account(GLM_OCR)
    # patch_embed: 3 channels × 2 frames × 14 × 14 into 48 with a bias; no post_conv_layernorm, no position table
    patch_embed = 3 * 2 * 14 * 14 * 48 + 48
    # a block: qkv 48 → 144 and proj, biased (attention_bias, default true); q_norm and k_norm of head_dim 12;
    # gate and up 48 → 80 and down 80 → 48, biased; norm1 and norm2
    block = (48 * 144 + 144) + (48 * 48 + 48) + 2 * 12 + 2 * (48 * 80 + 80) + (80 * 48 + 48) + 2 * 48
    # post_layernorm, then downsample: 2 × 2 patches of 48 into out_hidden_size 64, with a bias
    downsample = 48 * 2 * 2 * 64 + 64
    assert report.components.vision == patch_embed + 2 * block + 48 + downsample
    # the merger: proj 64 → 64, a LayerNorm with bias, gate and up 64 → 64 · 3 (in_channels), down back; no biases
    assert report.components.projector == 64 * 64 + 2 * 64 + 2 * 64 * 192 + 192 * 64


def test_a_true_text_tie_ties_glm_ocr_and_attention_bias_false_drops_every_tower_bias():
    report = account(UNTIED_UNBIASED)
    # the wrapper says false, text_config true: GlmOcrConfig.__post_init__ ties
    assert report.components.lm_head == 0
    # hidden 32 in 2 heads of 16, no biases: qkv, proj, q/k norms, MLP 32 → 40 gated, norms
    block = 32 * 96 + 32 * 32 + 2 * 16 + 3 * 32 * 40 + 2 * 32
    # 2 channels × 2 frames × 8 × 8 patches; downsample into 48
    assert report.components.vision == (2 * 2 * 8 * 8 * 32 + 32) + block + 32 + (32 * 4 * 48 + 48)
    # the merger's gate and up read 48 · 2 (in_channels)
    assert report.components.projector == 48 * 48 + 2 * 48 + 2 * 48 * 96 + 96 * 48


def test_glm_ocr_saves_its_tower_as_glm4v_does_with_per_head_norms():
    tensors = checkpoint_tensors(load_config(GLM_OCR).spec)
    assert tensors["model.visual.blocks.1.attn.q_norm.weight"] == (12,)
    assert tensors["model.visual.blocks.0.mlp.down_proj.bias"] == (48,)
    assert tensors["model.visual.merger.gate_proj.weight"] == (192, 64)
    assert "model.visual.embeddings.position_embedding.weight" not in tensors
    assert "model.language_model.layers.0.self_attn.q_proj.bias" not in tensors


def test_an_image_through_glm_ocrs_tower_by_hand():
    # smart_resize to multiples of 28 (patch 14 · merge 2): 640 × 480 → 644 × 476, 46 × 34 patches, 391 tokens
    image = flops(GLM_OCR, image="640x480").image
    patches, tokens = 46 * 34, 23 * 17
    assert (image.resized_width, image.resized_height, image.patches, image.image_tokens) == (644, 476, patches, tokens)
    assert image.patch_embedding == 2 * (3 * 2 * 14 * 14 * 48) * patches
    assert image.ffn == 2 * 2 * (3 * 48 * 80) * patches
    # per token: downsample (4 patches of 48 → 64) and the merger (proj, gate, up, down)
    assert image.projector == 2 * (4 * 48 * 64 + 64 * 64 + 3 * 64 * 192) * tokens
