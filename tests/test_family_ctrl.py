"""CTRL: pre-LN layers with biases everywhere, sinusoidal positions held in a buffer, a tied head with its own bias.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__ctrl.json, synthetic__ctrl*.json) and FlopCounterMode counts the same FLOPs
for synthetic__ctrl (tests/test_flops.py).
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__ctrl.json")


def test_ctrl_default_model_is_ctrl_1_63b(write_config):
    # CTRLConfig() is Salesforce/ctrl (1.63B in Keskar et al., 2019): n_embd 1,280, 48 layers, dff 8,192,
    # vocabulary 246,534; per layer Wq, Wk, Wv, dense and the two ffn linears, all biased, and two LayerNorms;
    # the tied head's bias (246,534) and the final LayerNorm.
    d, dff = 1280, 8192
    layer = 4 * (d * d + d) + (2 * d * dff + dff + d) + 2 * 2 * d
    total = 48 * layer + 246534 * d + 246534 + 2 * d
    assert total == 1_637_964_550
    assert account(str(write_config({"model_type": "ctrl"}))).total_params == total


def test_ctrl_head_bias_and_no_position_table():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["lm_head.bias"] == (1000,)
    assert "lm_head.weight" not in tensors  # tied to transformer.w
    assert tensors["transformer.h.2.multi_head_attention.Wq.weight"] == (64, 64)
    assert tensors["transformer.h.2.ffn.2.weight"] == (64, 96)
    assert not any("pos_encoding" in name for name in tensors)


def test_ctrl_heads_must_divide_the_width(write_config):
    with pytest.raises(InvalidConfigError, match=r"n_embd \(100\) is not a multiple of n_head"):
        account(str(write_config({"model_type": "ctrl", "n_embd": 100, "n_head": 3})))
