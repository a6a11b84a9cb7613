"""PP-FormulaNet: GOT-OCR2's SAM tower, a projector of two strided convolutions and two linears, and an MBart-style
decoder that cross-attends to the image's tokens in every layer; never tied.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__pp_formulanet.json: 180,897,536; synthetic__pp_formulanet.json: 189,848).
"""

from ffncalc import account, flops

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__pp_formulanet.json")


def test_the_default_pp_formulanet_by_hand(write_config):
    # PPFormulaNetTextConfig: 8 decoder layers of 512 (self- and cross-attention, q, k, v, out_proj biased; fc1 → 2048
    # and fc2, biased; three LayerNorms), a 50,000 × 512 table, 2,560 + 2 learned positions, layernorm_embedding and
    # the final layer_norm, a head of its own
    attention = 4 * (512 * 512 + 512)
    decoder_layer = 2 * attention + (512 * 2048 + 2048) + (2048 * 512 + 512) + 3 * 2 * 512
    text = 8 * decoder_layer + 50000 * 512 + 2562 * 512 + 2 * 2 * 512 + 50000 * 512
    # PPFormulaNetVisionConfig: SAM at 512 px in patches of 16 (a 32 × 32 grid), 12 layers of 768 (qkv, proj, lin1 →
    # 3072, lin2, biased; two LayerNorms) with relative-position tables of head_dim 64: 2 · 14 − 1 rows a side in
    # the windowed layers, 2 · 32 − 1 in the global ones (2, 5, 8, 11); the patch convolution, the position grid, the
    # neck (1 × 1 into 256, 3 × 3, no biases; two LayerNorms)
    sam_layer = (768 * 2304 + 2304) + (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 2 * 768
    layers = 8 * (sam_layer + 2 * 27 * 64) + 4 * (sam_layer + 2 * 63 * 64)
    neck = 768 * 256 + 2 * 256 + 256 * 256 * 9 + 2 * 256
    vision = layers + (3 * 16 * 16 * 768 + 768) + 32 * 32 * 768 + neck
    # the projector: 3 × 3 convolutions 256 → 512 → 1024 without biases, linear_1 1024 square, linear_2 → 512
    projector = 256 * 512 * 9 + 512 * 1024 * 9 + (1024 * 1024 + 1024) + (1024 * 512 + 512)
    report = account(str(write_config({"model_type": "pp_formulanet"})))
    assert (report.components.vision, report.components.projector) == (vision, projector)
    assert report.total_params == text + vision + projector == 180_897_536


def test_pp_formulanet_never_ties_its_head():
    # PPFormulaNetForConditionalGeneration._tied_weights_keys is {}
    assert account(SYNTHETIC).components.lm_head == 320 * 64


def test_pp_formulanets_decoder_cross_attends_to_one_images_tokens_by_hand():
    # an 80 px image in patches of 8: a 10 × 10 grid, halved twice by the projector's strided convolutions (⌈10 / 2⌉
    # = 5, ⌈5 / 2⌉ = 3): 9 keys for every cross-attention, whatever the context. Per token at context 64, 2 layers:
    # self-attention over 64 keys and cross-attention over 9, each 2 · 64 (q · k and the values) × 2 FLOPs
    report = flops(SYNTHETIC, context=64)
    assert report.per_token.attention_scores == 2 * (2 * 2 * 64 * 64 + 2 * 2 * 64 * 9)


def test_pp_formulanet_says_how_many_image_tokens_its_cross_attention_reads():
    # the 80 px synthetic image: a 10 × 10 grid halved twice, 9 tokens
    notes = account(SYNTHETIC).notes
    assert "every decoder layer cross-attends to one image's 9 tokens (the projector's output)" in notes[-1]
