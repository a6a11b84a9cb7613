"""Granite-Docling: SigLIP's tower over 512 × 512 tiles, a connector with a coarse and a fine pixel-shuffle path
(each with DeepStack mergers), a density router, and Granite's language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__granite_docling.json: 284,834; defaults__granite_docling.json: 543,428,352).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__granite_docling.json")


def test_granite_doclings_language_model_by_hand():
    # 2 layers of 64, 4 heads of 16 and 2 KV heads (no biases), gate, up, down 64 ↔ 96, two RMSNorms; a final norm;
    # a 320 × 64 token table tied to the head
    layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert account(CONFIG).language_model_params == 2 * layer + 64 + 320 * 64 == 82240


def test_granite_doclings_tower_is_siglips_by_hand():
    # a 16 × 16 patch convolution 3 → 32 (biased), (64 / 16)² = 16 positions, 4 layers (q, k, v, out_proj 32 → 32,
    # fc1 32 → 48, fc2, all biased; two LayerNorms), post_layernorm
    layer = 4 * (32 * 32 + 32) + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 2 * 32
    assert account(CONFIG).components.vision == (3 * 16 * 16 * 32 + 32) + 16 * 32 + 4 * layer + 2 * 32 == 55200


def test_granite_doclings_connector_holds_both_paths_and_the_router_by_hand():
    # each path at factor s: projection 32 · s² → 64 (no bias) and two DeepStack mergers (LayerNorm over 32 · s²,
    # linear_1 32 · s² → 64, linear_2 64 → 64, biased); coarse s = 4, fine s = 2
    def path(s):
        merged = 32 * s * s
        return merged * 64 + 2 * (2 * merged + (merged * 64 + 64) + (64 * 64 + 64))

    shared = 2 * 32 + 2 * 64 + 64 * 64 + 2 * 64  # ln_in, ln_mid, mlp_fc2 (no bias), ln_out
    router = (32 + 1) + 2 * 32 + (32 * 16 + 16) + (16 + 1)  # att, norm, fc1, fc2 (density_router_hidden_size 16)
    assert account(CONFIG).components.projector == path(4) + path(2) + shared + router == 147394


def test_granite_docling_refuses_a_connector_narrower_than_the_language_model(write_config):
    # GraniteDoclingConfig.validate_architecture: vision_config.out_hidden_size must be text_config.hidden_size
    config = {"model_type": "granite_docling", "vision_config": {"out_hidden_size": 512}}
    with pytest.raises(InvalidConfigError, match="out_hidden_size"):
        account(str(write_config(config)))


def test_granite_doclings_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "granite_docling"}))).total_params == 543428352
