"""Adept's Persimmon: fused query_key_value, q/k LayerNorms per head, a squared-ReLU MLP, biases everywhere.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def persimmon_layer(hidden: int, heads: int, ffn: int, qk_layernorm: bool = True) -> int:
    """query_key_value 3H · H + 3H, dense H² + H, the MLP 2 · H · I + I + H, two LayerNorms 2H each, and with
    qk_layernorm a LayerNorm of H / heads (weight and bias) for queries and one for keys."""
    head_norms = 2 * 2 * (hidden // heads) if qk_layernorm else 0
    return (
        3 * hidden * hidden
        + 3 * hidden
        + hidden * hidden
        + hidden
        + 2 * hidden * ffn
        + ffn
        + hidden
        + 4 * hidden
        + head_norms
    )


def test_persimmon_layer_by_hand():
    (layer,) = account(str(CONFIGS / "synthetic__persimmon.json")).layers
    assert layer.params == persimmon_layer(64, 4, 256)
    assert layer.parts["norm.q_norm"] == layer.parts["norm.k_norm"] == 16 + 16


def test_persimmon_without_qk_layernorm():
    (layer,) = account(str(CONFIGS / "synthetic__persimmon_no_qk_layernorm.json")).layers
    assert layer.params == persimmon_layer(48, 3, 96, qk_layernorm=False)


def test_persimmon_defaults_are_persimmon_8b(write_config):
    # PersimmonConfig's defaults: H 4,096, 36 layers of 64 heads, FFN 16,384, vocabulary 262,144, untied.
    hidden, vocab = 4096, 262144
    total = 36 * persimmon_layer(hidden, 64, 16384) + 2 * vocab * hidden + 2 * hidden
    assert account(str(write_config({"model_type": "persimmon"}))).total_params == total == 9_397_175_296
