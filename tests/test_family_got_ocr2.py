"""GOT-OCR 2.0: SAM's ViT (windowed and global layers with relative position tables, a convolutional neck), a projector
of two strided convolutions and a linear, a Qwen2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__got_ocr2.json: 353,160; defaults__got_ocr2.json: 560,528,640).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

GOT_OCR2 = str(ROOT / "tests" / "configs" / "synthetic__got_ocr2.json")

# the tower: 48 wide, 4 heads of 12, FFN 80, patches of 16 px at 128 px (an 8 × 8 grid)
SAM_LAYER = (48 * 144 + 144) + (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48  # qkv, proj, MLP, norms


def test_got_ocr2_counts_windowed_and_global_layers_relative_position_tables_by_hand():
    # rel_pos_h and rel_pos_w: 2 · window_size − 1 = 5 rows of head_dim 12 in the windowed layers (0 and 2),
    # 2 · 8 − 1 = 15 rows in the global one (global_attn_indexes [1])
    windowed, whole = SAM_LAYER + 2 * 5 * 12, SAM_LAYER + 2 * 15 * 12
    embeddings = (48 * 3 * 16 * 16 + 48) + 8 * 8 * 48  # the biased patch convolution, pos_embed [1, 8, 8, 48]
    neck = 32 * 48 + 2 * 32 + 32 * 32 * 3 * 3 + 2 * 32  # 1 × 1 into output_channels 32, LayerNorm, 3 × 3, LayerNorm
    assert account(GOT_OCR2).components.vision == embeddings + 2 * windowed + whole + neck


def test_got_ocr2s_projector_is_two_strided_convolutions_and_a_linear():
    # conv_upsampler1 32 → 64 and conv_upsampler2 64 → 64 (3 × 3, no bias), multimodal_projector 64 → 64 with a bias
    assert account(GOT_OCR2).components.projector == 64 * 32 * 9 + 64 * 64 * 9 + (64 * 64 + 64)


def test_got_ocr2s_language_model_is_untied_by_the_wrappers_flag():
    report = account(GOT_OCR2)
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64  # Qwen2: q/k/v biases, GQA
    assert report.language_model_params == 2 * layer + 64 + 2 * 1000 * 64


def test_got_ocr2s_image_flops_are_refused_by_name():
    # padded windows, relative-position terms and the strided convolutions: no image rule, counted by parameter
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(GOT_OCR2, image="640x480")
