"""Baidu's dense ERNIE 4.5: one bias switch for attention and MLP, none on the head.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_ernie_4_5_default_model_is_the_0_3b_by_hand(write_config):
    # Ernie4_5Config's defaults (ERNIE-4.5-0.3B): H 1,024, FFN 3,072, 18 layers of 16 query and 2 KV heads of
    # 128, vocabulary 103,424, tied. A layer: q and o 1,024 × 2,048, k and v 1,024 × 256, SwiGLU, two RMSNorms.
    hidden = 1024
    layer = 2 * hidden * 2048 + 2 * hidden * 256 + 3 * hidden * 3072 + 2 * hidden
    assert (
        account(str(write_config({"model_type": "ernie4_5"}))).total_params
        == 18 * layer + 103424 * hidden + hidden
        == 360_748_032
    )


def test_ernie_4_5_use_bias_reaches_attention_and_mlp_but_not_the_head():
    report = account(str(CONFIGS / "synthetic__ernie4_5.json"))
    parts = report.layers[0].parts
    assert parts["attention.o"] == 96 * 64 + 64 and parts["ffn.gate"] == 64 * 96 + 96
    assert report.components.lm_head == 320 * 64
