"""Qianfan-OCR: InternVL's model (InternViT with attention_bias true by default, the pixel-shuffle projector) around a
Qwen3 language model by default, untied by default, saved in the original InternVL layout.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__qianfan_ocr.json: 175,136; synthetic__qianfan_ocr_options.json: 95,144;
defaults__qianfan_ocr.json: 12,387,044,352).
"""

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
QIANFAN = str(CONFIGS / "synthetic__qianfan_ocr.json")
OPTIONS = str(CONFIGS / "synthetic__qianfan_ocr_options.json")


def test_qianfan_ocr_counts_its_tower_projector_and_qwen3_by_hand():
    report = account(QIANFAN)
    # Qwen3: hidden 64, 2 layers of 4 heads (2 KV) of 16, q/k RMSNorms of 16, MLP 96; vocabulary 500
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64 + 2 * 16
    assert report.language_model_params == 2 * layer + 64 + 500 * 64 + 500 * 64
    # InternViT: class token, a biased 14 × 14 convolution into 32, 4 × 4 + 1 positions; 2 layers of qkv (biased:
    # attention_bias defaults to true here), a biased proj, fc1 32 → 64 and fc2, two LayerNorms, ls1 and ls2
    layer = (32 * 96 + 96) + (32 * 32 + 32) + (32 * 64 + 64) + (64 * 32 + 32) + 2 * 64 + 2 * 32
    assert report.components.vision == 32 + (3 * 14 * 14 * 32 + 32) + 17 * 32 + 2 * layer
    # the projector: 2 × 2 patches side by side (128), a LayerNorm with bias, linear_1 128 → 64, linear_2, biased
    assert report.components.projector == 2 * 128 + (128 * 64 + 64) + (64 * 64 + 64)


def test_qianfan_ocr_is_untied_by_its_own_default_whatever_text_config_says():
    # QianfanOCRConfig.tie_word_embeddings is false; text_config's true does not tie the wrapper
    assert account(QIANFAN).components.lm_head == 500 * 64
    assert account(OPTIONS).components.lm_head == 0  # the wrapper says true


def test_qianfan_ocrs_tower_options_are_internvits_by_hand():
    report = account(OPTIONS)
    # hidden 32 in 4 heads, qkv without bias, proj biased always, q_norm and k_norm over all heads (32 each), fc1
    # 32 → 48 and fc2 biased, two RMSNorms, ls1 and ls2
    layer = 32 * 96 + (32 * 32 + 32) + 2 * 32 + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 32 + 2 * 32
    # class and mask tokens, a 16 × 16 convolution, 4 × 4 + 1 positions, the final LayerNorm (use_mean_pooling false)
    assert report.components.vision == 32 + 32 + (3 * 16 * 16 * 32 + 32) + 17 * 32 + 2 * 32 + layer
    # downsample_ratio 0.25: 4 × 4 patches side by side (512) into a Qwen2 of 48
    assert report.components.projector == 2 * 512 + (512 * 48 + 48) + (48 * 48 + 48)


def test_qianfan_ocr_is_saved_in_the_original_internvl_layout():
    tensors = checkpoint_tensors(load_config(QIANFAN).spec)
    assert tensors["vision_model.encoder.layers.1.attn.qkv.weight"] == (96, 32)
    assert tensors["vision_model.encoder.layers.1.attn.qkv.bias"] == (96,)
    assert tensors["vision_model.encoder.layers.0.ls1"] == (32,)
    assert tensors["vision_model.embeddings.position_embedding"] == (1, 17, 32)
    assert tensors["mlp1.0.weight"] == (128,)
    assert tensors["mlp1.3.weight"] == (64, 64)
    assert tensors["language_model.model.layers.1.self_attn.q_norm.weight"] == (16,)
    assert tensors["language_model.lm_head.weight"] == (500, 64)


def test_one_tile_through_qianfan_ocrs_tower_by_hand():
    # a tile of 56 px: 4 × 4 patches and the class token through 2 layers, pixel-shuffled 2 × 2 into 4 tokens
    image = flops(QIANFAN, image="640x480").image
    carried, width, inner, heads, head_dim = 17, 32, 64, 2, 16
    assert image.per_tile and (image.patches, image.image_tokens) == (16, 4)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * width) * 16
    assert image.attention_projections == 2 * 2 * (4 * width * width) * carried
    assert image.ffn == 2 * 2 * (2 * width * inner) * carried
    assert image.attention_scores == 2 * 2 * heads * (head_dim + head_dim) * carried * carried
    assert image.projector == 2 * (128 * 64 + 64 * 64) * 4
