"""The first OLMo (model_type olmo): Llama's projections and LayerNorms without any parameter.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_olmo_layers_hold_only_projections():
    # hidden 64, 4 heads of 16, 2 KV heads, FFN 128, attention biases: q and o 64 · 64 + 64, k and v 64 · 32 + 32,
    # SwiGLU 3 · 64 · 128; no norm has a weight.
    (layer,) = account(str(CONFIGS / "synthetic__olmo.json")).layers
    assert layer.params == 2 * (64 * 64 + 64) + 2 * (64 * 32 + 32) + 3 * 64 * 128
    assert not any(part.startswith("norm.") for part in layer.parts)


def test_olmo_has_no_final_norm_and_ties_when_told():
    report = account(str(CONFIGS / "synthetic__olmo.json"))
    assert report.components.norm == 0
    assert set(report.outside_layers) == {"embedding.embed_tokens"}


def test_olmo_defaults_are_olmo_7b(write_config):
    # OlmoConfig's defaults: H 4,096, 32 layers, FFN 11,008, vocabulary 50,304, untied: 4 · H² + 3 · H · I a layer.
    hidden, ffn, vocab = 4096, 11008, 50304
    total = 32 * (4 * hidden * hidden + 3 * hidden * ffn) + 2 * vocab * hidden
    assert account(str(write_config({"model_type": "olmo"}))).total_params == total == 6_888_095_744  # "OLMo-7B"
