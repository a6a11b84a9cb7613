"""VaultGemma: Gemma-2's layer with norms before the sublayers only.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_vaultgemma_keeps_two_norms_a_layer():
    full, _sliding = account(str(CONFIGS / "synthetic__vaultgemma.json")).layers
    assert sorted(name for name in full.parts if name.startswith("norm.")) == [
        "norm.input_layernorm",
        "norm.pre_feedforward_layernorm",
    ]
    assert full.components.norm == 2 * 64


def test_vaultgemma_default_model_by_hand(write_config):
    # VaultGemmaConfig's defaults: H 2,304, FFN 9,216, 26 layers of 8 query and 4 KV heads of 256, vocabulary
    # 256,000, tied. A layer: q 2,304 × 2,048, k and v 2,304 × 1,024, o 2,048 × 2,304, GeGLU, two RMSNorms.
    hidden = 2304
    layer = 2 * hidden * 2048 + 2 * hidden * 1024 + 3 * hidden * 9216 + 2 * hidden
    report = account(str(write_config({"model_type": "vaultgemma"})))
    assert report.total_params == 26 * layer + 256000 * hidden + hidden == 2_614_222_080
    windows = [group.window for group in report.layers]
    assert windows == [4096, None]  # Gemma-2's alternation: even layers slide
