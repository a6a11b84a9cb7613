"""Moshi's temporal transformer as a causal LM: a fused gated MLP and a token table one row longer than its head.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__moshi.json, synthetic__moshi.json) and FlopCounterMode counts the same forward
(tests/expected/flop_counter.json, synthetic__moshi).
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__moshi.json")


def test_moshi_default_model_by_hand(write_config):
    # MoshiConfig(): H 4,096, 32 layers of 32 heads of 128 (q, k, v, o 4,096²), fc1 4,096 → 22,528 and fc2
    # 11,264 → 4,096, two RMSNorms a layer; embed_tokens 32,001 rows, lm_head 32,000, the final norm.
    hidden = 4096
    layer = 4 * hidden * hidden + hidden * 22528 + 11264 * hidden + 2 * hidden
    report = account(str(write_config({"model_type": "moshi"})))
    assert report.total_params == 32 * layer + 32001 * hidden + 32000 * hidden + hidden == 6_839_083_008


def test_moshi_table_has_one_row_more_than_its_head_and_nothing_is_tied():
    # vocabulary 320: embed_tokens 321 × 64, lm_head 320 × 64 although the config asks to tie
    report = account(SYNTHETIC)
    assert (report.components.embedding, report.components.lm_head) == (321 * 64, 320 * 64)


def test_moshi_fc1_holds_gate_and_up_and_fc2_reads_half():
    # ffn_dim 200: fc1 64 → 200, fc2 100 → 64, per layer
    assert account(SYNTHETIC).components.ffn == 2 * (64 * 200 + 100 * 64)


def test_moshi_refuses_an_odd_ffn_dim(write_config):
    with pytest.raises(InvalidConfigError, match="ffn_dim"):
        account(str(write_config({"model_type": "moshi", "ffn_dim": 201})))


def test_moshi_says_the_conditional_generation_class_is_counted_as_its_causal_lm(write_config):
    config = {"model_type": "moshi", "architectures": ["MoshiForConditionalGeneration"]}
    model = load_config(str(write_config(config)))
    assert model.config.model_class() == "MoshiForCausalLM"
    assert model.config.notes()[0].startswith("MoshiForConditionalGeneration is not counted: it also builds")
