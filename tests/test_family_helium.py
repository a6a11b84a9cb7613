"""Kyutai's Helium: o_proj maps hidden_size to hidden_size, whatever the heads are.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_helium_o_proj_reads_hidden_size_and_has_no_bias():
    # head_dim 24: q 64 → 4 · 24 = 96 with bias; o_proj is Linear(64, 64) without bias all the same.
    parts = account(str(CONFIGS / "synthetic__helium.json")).layers[0].parts
    assert parts["attention.q"] == 64 * 96 + 96
    assert parts["attention.k"] == 64 * 48 + 48
    assert parts["attention.o"] == 64 * 64


def test_helium_default_model_by_hand(write_config):
    # HeliumConfig's defaults: H 2,560, FFN 7,040, 24 layers of 20 heads of 128 (q, k, v, o 2,560²), vocabulary
    # 48,000, untied.
    hidden = 2560
    layer = 4 * hidden * hidden + 3 * hidden * 7040 + 2 * hidden
    assert account(str(write_config({"model_type": "helium"}))).total_params == 24 * layer + 2 * 48000 * hidden + hidden
