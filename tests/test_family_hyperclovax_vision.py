"""HyperCLOVA X SEED Vision v2: Qwen2.5-VL's tower and merger, a biased projector and a HyperCLOVA X language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__hyperclovax_vision_v2.json: 184,528; defaults__hyperclovax_vision_v2.json:
9,705,315,072).
"""

from ffncalc import account

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__hyperclovax_vision_v2.json")


def test_hyperclovax_vision_reads_a_qwen2_5_vl_block_as_its_tower_by_hand():
    # vision_config.model_type "qwen2_5_vl" (as the Hub's configs say) is Qwen2.5-VL's tower: a 3 × 2 × 14 × 14
    # patch convolution → 32 (no bias), 2 blocks (fused qkv and proj 32 → 32, gated FFN 32 ↔ 48, all biased; two
    # RMSNorms)
    block = 4 * (32 * 32 + 32) + 2 * (32 * 48 + 48) + (48 * 32 + 32) + 2 * 32
    assert account(CONFIG).components.vision == 3 * 2 * 14 * 14 * 32 + 2 * block == 55680


def test_hyperclovax_visions_merger_and_projector_by_hand():
    # merger: ln_q (32), mlp.0 128 → 128, mlp.2 128 → 48 (biased); projector 48 → 64 (biased)
    merger = 32 + (128 * 128 + 128) + (128 * 48 + 48)
    assert account(CONFIG).components.projector == merger + (48 * 64 + 64) == 25872


def test_hyperclovax_visions_language_model_with_its_post_norms_by_hand():
    # 2 layers of 64, 4 heads of 16 and 2 KV heads, gate, up, down 64 ↔ 96, four RMSNorms (use_post_norm); a final
    # norm; a 320 × 64 table and an untied head
    layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 96 + 4 * 64
    assert account(CONFIG).language_model_params == 2 * layer + 64 + 2 * 320 * 64 == 102976


def test_hyperclovax_visions_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "hyperclovax_vision_v2"}))).total_params == 9705315072
