"""Florence-2: a DaViT backbone (convolutional stages of window- and channel-attention blocks) and a projector in front
of a BART encoder-decoder.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__florence2.json: 392,480; synthetic__florence2_untied.json: 412,006;
defaults__florence2.json: 497,761,280).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__florence2.json")
UNTIED = str(ROOT / "tests" / "configs" / "synthetic__florence2_untied.json")


def block(dim: int, qkv_bias: bool = True) -> int:
    """Two depthwise 3 × 3 convolutions (biased), two LayerNorms, qkv and proj, fc1 and fc2 of int(dim · 2.5)."""
    inner = int(dim * 2.5)
    return (
        2 * (dim * 9 + dim)
        + 2 * 2 * dim
        + (dim * 3 * dim + (3 * dim if qkv_bias else 0))
        + (dim * dim + dim)
        + (dim * inner + inner)
        + (inner * dim + dim)
    )


def test_florence2s_davit_backbone_by_hand():
    # stage 0: a 7 × 7 conv 3 → 32 (biased), its LayerNorm over 32 (no prenorm), one block of a spatial and a channel
    # block; stage 1: a 3 × 3 conv 32 → 64, its LayerNorm over its input (32, prenorm), two blocks
    stages = (3 * 49 * 32 + 32) + 2 * 32 + 2 * block(32) + (32 * 9 * 64 + 64) + 2 * 32 + 2 * 2 * block(64)
    assert account(CONFIG).components.vision == stages == 199328


def test_florence2s_projector_by_hand():
    # image_projection 64 → 64 (no bias), image_proj_norm (64), row and column tables of 10 rows × 32
    assert account(CONFIG).components.projector == 64 * 64 + 2 * 64 + 2 * 10 * 32


def test_florence2s_head_is_tied_unless_its_flag_says_otherwise():
    assert account(CONFIG).components.lm_head == 0
    assert account(UNTIED).components.lm_head == 320 * 64


def test_florence2s_language_model_is_barts_without_final_logits_bias_by_hand():
    # 2 encoder and 2 decoder layers of 64 (FFN 96, biased everywhere; the decoder's cross-attention), learned
    # positions of 128 + 2 rows per stack, layernorm_embedding per stack, a 320 × 64 shared table
    attention = 4 * (64 * 64 + 64)
    ffn = (64 * 96 + 96) + (96 * 64 + 64)
    encoder = 2 * (attention + ffn + 2 * 128)
    decoder = 2 * (2 * attention + ffn + 3 * 128)
    assert account(CONFIG).language_model_params == encoder + decoder + 2 * (130 * 64 + 128) + 320 * 64


def test_florence2s_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "florence2"}))).total_params == 497761280


def test_an_image_through_florence2_is_refused_as_ffncalc_has_no_rule_for_its_stages():
    with pytest.raises(UsageError, match="`image` needs"):
        flops(CONFIG, image="768x768")
