"""Arcee's AFM: Llama's attention around a plain up/down MLP (ReLU²).

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_arcee_mlp_is_plain_up_and_down_with_mlp_bias():
    parts = account(str(CONFIGS / "synthetic__arcee.json")).layers[0].parts
    assert "ffn.gate" not in parts
    assert parts["ffn.up"] == 64 * 192 + 192 and parts["ffn.down"] == 192 * 64 + 64


def test_arcee_ffn_flops_per_token_are_two_matrices():
    # 2 layers × 2 FLOPs × (64 · 192 + 192 · 64)
    assert flops(str(CONFIGS / "synthetic__arcee.json"), 1).per_token.ffn == 2 * 2 * 2 * 64 * 192


def test_arcee_refuses_a_hidden_size_the_heads_do_not_divide_as_transformers_does(write_config):
    with pytest.raises(InvalidConfigError, match="not a multiple of num_attention_heads"):
        account(str(write_config({"model_type": "arcee", "hidden_size": 66, "num_attention_heads": 4, "head_dim": 16})))
