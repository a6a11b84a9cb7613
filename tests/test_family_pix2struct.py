"""Pix2Struct: an encoder over flattened image patches and a T5 v1.1 decoder cross-attending to them.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__pix2struct.json: 249,888; defaults__pix2struct.json: 282,285,696).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__pix2struct.json")

# decoder: 64 wide, 4 heads of 16, gated MLP of 96; query, key, value, output 64 → 64 in both attentions
DECODER_LAYER = 4 * 64 * 64 + 4 * 64 * 64 + 3 * 64 * 96 + 3 * 64  # + three RMS layer norms
# encoder: 64 wide, 4 heads of 8 (32 inside), gated MLP of 80
ENCODER_LAYER = 3 * 64 * 32 + 32 * 64 + 3 * 64 * 80 + 2 * 64


def test_pix2structs_decoder_is_t5s_with_its_own_head_by_hand():
    # 3 blocks, relative position buckets (8) × heads (4) in the first; 320-row table and an untied head; final norm
    report = account(CONFIG)
    assert report.components.cross_attention == 3 * 4 * 64 * 64
    assert report.components.lm_head == 320 * 64
    decoder = 3 * DECODER_LAYER + 8 * 4 + 2 * 320 * 64 + 64
    assert report.total_params - decoder == 2 * ENCODER_LAYER + (48 * 64 + 64) + 2 * 32 * 64 + 64


def test_pix2structs_encoder_embeds_flattened_patches_with_row_and_column_tables_by_hand():
    # patch_projection 48 → 64 (biased), row_embedder and column_embedder of seq_len 32 rows
    assert account(CONFIG).components.embedding == (48 * 64 + 64) + 2 * 32 * 64 + 320 * 64 == 27712


def test_pix2struct_total_by_hand():
    total = 3 * DECODER_LAYER + 8 * 4 + 2 * 320 * 64 + 64 + 2 * ENCODER_LAYER + (48 * 64 + 64) + 2 * 32 * 64 + 64
    assert account(CONFIG).total_params == total == 249888


def test_a_generated_token_cross_attends_to_2048_patches_by_hand():
    # Pix2StructImageProcessor pads every image to max_patches = 2048; 2 · heads · (16 + 16) FLOPs a key
    per_key = 2 * 4 * (16 + 16)
    assert flops(CONFIG, context=8).per_token.attention_scores == 3 * (8 + 2048) * per_key


def test_the_prefill_projects_every_one_of_2048_patches_by_hand():
    # patch_projection's 48 · 64 weights once per patch (a model-level module: other)
    assert flops(CONFIG, context=8).prefill.other == 2 * 48 * 64 * 2048


def test_pix2structs_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "pix2struct"}))).total_params == 282285696
