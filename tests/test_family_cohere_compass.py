"""Cohere Compass: Qwen3-VL's tower and mergers around Cohere Compass's language model (Cohere2's parallel layers).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__cohere_compass.json: 224,656) and refuses the default config
(defaults__cohere_compass.json: KeyError 'full_attention', no rope_parameters for the layers' kind).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__cohere_compass.json")


def test_cohere_compass_language_model_by_hand():
    # 2 parallel layers of 64: q 64 → 64, k and v 64 → 32, o (no biases), gate, up, down 64 ↔ 96, one LayerNorm
    # without bias; a final LayerNorm; a 320 × 64 table and an untied head (the wrapper's flag, default false)
    layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 96 + 64
    assert account(CONFIG).language_model_params == 2 * layer + 64 + 2 * 320 * 64 == 102592


def test_cohere_compass_tower_and_mergers_are_qwen3_vls_by_hand():
    # a 3 × 2 × 16 × 16 patch convolution → 32 (biased), 16 learned positions, 3 blocks (qkv 32 → 96, proj, fc1
    # 32 → 48, fc2, all biased; two LayerNorms); merger: LayerNorm (32), 128 → 128 → 64; one deepstack merger whose
    # LayerNorm reads 128
    block = (32 * 96 + 96) + (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 2 * 32
    mlp = (128 * 128 + 128) + (128 * 64 + 64)
    report = account(CONFIG)
    assert report.components.vision == (3 * 2 * 16 * 16 * 32 + 32) + 16 * 32 + 3 * block == 72208
    assert report.components.projector == (2 * 32 + mlp) + (2 * 128 + mlp) == 49856


def test_cohere_compass_default_config_is_refused_as_transformers_refuses_it(write_config):
    with pytest.raises(InvalidConfigError, match="rope_parameters: no entry for full_attention"):
        account(str(write_config({"model_type": "cohere_compass"})))
