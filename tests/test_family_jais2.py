"""Jais 2: Llama's attention with LayerNorms and a plain relu² MLP, biases everywhere by default.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__jais2.json, synthetic__jais2.json).
"""

from ffncalc import account
from ffncalc.api import load_config

from .conftest import ROOT


def test_jais2_default_model_by_hand(write_config):
    # Jais2Config(): H 3,328, 32 layers of 26 heads of 128 (no GQA), MLP 26,624, vocabulary 150,272, untied.
    # Attention 4 · H² and 4 · H biases; up and down H × 26,624 with biases; two LayerNorms of weight and bias.
    hidden, ffn, vocab = 3328, 26624, 150272
    layer = 4 * hidden * hidden + 4 * hidden + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    report = account(str(write_config({"model_type": "jais2"})))
    assert report.total_params == 32 * layer + 2 * vocab * hidden + 2 * hidden == 8_090_401_280


def test_jais2_norms_are_layernorms_with_biases():
    spec = load_config(str(ROOT / "tests" / "configs" / "synthetic__jais2.json")).spec
    assert spec.final_norm.kind == "layernorm" and spec.final_norm.bias
    assert {norm.kind for _, norm in spec.layers[0].norms} == {"layernorm"}
