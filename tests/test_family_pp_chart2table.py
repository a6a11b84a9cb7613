"""PP-Chart2Table: GOT-OCR2's model (SAM's ViT, two strided convolutions and a linear, a Qwen2 language model), which
transformers builds as GotOcr2ForConditionalGeneration from PPChart2TableConfig.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__pp_chart2table.json: 227,248; defaults__pp_chart2table.json: 560,528,640).
"""

from ffncalc import account

from .conftest import ROOT

PP_CHART2TABLE = str(ROOT / "tests" / "configs" / "synthetic__pp_chart2table.json")


def test_its_sam_tower_without_qkv_bias_keeps_the_biased_proj():
    # 48 wide, 4 heads of 12, FFN 72, a 4 × 4 grid; qkv_bias false: qkv has no bias, proj always has one
    layer = 48 * 144 + (48 * 48 + 48) + (48 * 72 + 72) + (72 * 48 + 48) + 4 * 48
    tables = 2 * 7 * 12 + 2 * 3 * 12  # layer 0 global (2 · 4 − 1 rows), layer 1 windows of 2 (2 · 2 − 1 rows)
    embeddings = (48 * 3 * 16 * 16 + 48) + 4 * 4 * 48
    neck = 16 * 48 + 2 * 16 + 16 * 16 * 9 + 2 * 16
    assert account(PP_CHART2TABLE).components.vision == 2 * layer + tables + embeddings + neck


def test_its_projector_and_tied_qwen2_are_got_ocr2s():
    report = account(PP_CHART2TABLE)
    assert report.components.projector == 32 * 16 * 9 + 64 * 32 * 9 + (64 * 64 + 64)
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 64 + 1000 * 64  # tied: the wrapper's default (true)
