"""LightOnOCR: a Pixtral tower, Mistral 3's projector under its own names (model.vision_projection.), a Qwen3 language
model; no image rule (its processor resizes by the image processor's own patch size, not in config.json).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__lighton_ocr.json: 287,712; defaults__lighton_ocr.json: 1,005,647,872).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

LIGHTON_OCR = str(ROOT / "tests" / "configs" / "synthetic__lighton_ocr.json")


def test_lighton_ocr_counts_pixtral_its_unbiased_projector_and_qwen3_by_hand():
    report = account(LIGHTON_OCR)
    # Pixtral: 4 heads of 12 (q, k, v, o 48 × 48), a gated FFN 80 wide, two RMSNorms; the patch convolution, ln_pre
    assert report.components.vision == 2 * (4 * 48 * 48 + 3 * 48 * 80 + 2 * 48) + 48 * 3 * 14 * 14 + 48
    # an RMSNorm, the merger of spatial_merge_size 3: 9 · 48 → 48, linear_1 48 → 64, linear_2 64 → 64, no biases
    assert report.components.projector == 48 + 9 * 48 * 48 + 48 * 64 + 64 * 64
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 2 * 16 + 3 * 64 * 96 + 2 * 64  # Qwen3: q/k norms per head
    assert report.language_model_params == 2 * layer + 64 + 2 * 1000 * 64  # untied by the wrapper's flag


def test_lighton_ocrs_image_flops_are_refused_by_name():
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(LIGHTON_OCR, image="640x480")
