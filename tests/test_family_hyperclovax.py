"""HyperCLOVA X: Granite's layer with an RMSNorm on each block's output before the residual sum.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__hyperclovax.json, synthetic__hyperclovax*.json) and FlopCounterMode counts the
same FLOPs for synthetic__hyperclovax (tests/test_flops.py).
"""

import json

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__hyperclovax.json"


def test_hyperclovax_default_model_by_hand(write_config):
    # HyperCLOVAXConfig(): H 4,096, 32 layers of 32 heads of 128 (no grouping), MLP 11,008, vocabulary 32,000,
    # untied; four RMSNorms a layer (two of them post-norms) and the final one.
    hidden = 4096
    total = 32 * (4 * hidden * hidden + 3 * hidden * 11008 + 4 * hidden) + 2 * 32000 * hidden + hidden
    report = account(str(write_config({"model_type": "hyperclovax"})))
    assert report.total_params == total == 6_738_677_760


def test_hyperclovax_post_norms_are_two_per_layer(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "use_post_norm": False}
    difference = account(str(SYNTHETIC)).total_params - account(str(write_config(config))).total_params
    assert difference == 3 * 2 * 64


def test_hyperclovax_hidden_size_must_be_a_multiple_of_the_heads(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "num_attention_heads": 5, "num_key_value_heads": 5}
    with pytest.raises(InvalidConfigError, match="not a multiple of num_attention_heads"):
        account(str(write_config(config)))
