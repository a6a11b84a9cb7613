"""Apertus 1.5's language model: Apertus's layers, an extended vocabulary and a head output_vocab_size may prune.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__apertus1p5_text.json, synthetic__apertus1p5_text*.json) and FlopCounterMode
counts the same FLOPs for synthetic__apertus1p5_text (tests/test_flops.py).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = ROOT / "tests" / "configs" / "synthetic__apertus1p5_text.json"


def test_apertus1p5_default_model_by_hand(write_config):
    # Apertus1p5TextConfig(): H 4,096, 32 layers of 32 heads of 128 with q/k norms, an up/down MLP of 14,336 with
    # xIELU's two scalars, two RMSNorms a layer; vocabulary 266,752, the head unpruned and untied.
    hidden = 4096
    layer = 4 * hidden * hidden + 2 * 128 + 2 * hidden * 14336 + 2 + 2 * hidden
    total = 32 * layer + 2 * 266752 * hidden + hidden
    report = account(str(write_config({"model_type": "apertus1p5_text"})))
    assert report.total_params == total == 8_091_086_912


def test_apertus1p5_pruned_head_has_output_vocab_size_rows():
    # synthetic: a table of 700 × 64 and a head of 400 × 64; a token's logits cost 2 · 400 · 64.
    report = account(str(SYNTHETIC))
    assert (report.components.embedding, report.components.lm_head) == (700 * 64, 400 * 64)
    assert flops(str(SYNTHETIC), 1).per_token.lm_head == 2 * 400 * 64


def test_apertus1p5_tied_head_is_the_whole_table(write_config):
    # Tied, transformers replaces the pruned head's weight by the token table: 700 logits, nothing stored twice.
    config = {**json.loads(SYNTHETIC.read_text()), "tie_word_embeddings": True}
    model = load_config(str(write_config(config)))
    assert account(model).components.lm_head == 0
    assert flops(model, 1).per_token.lm_head == 2 * 700 * 64
    assert any("output_vocab_size (400)" in note for note in model.info.notes)


def test_apertus1p5_output_vocab_size_past_the_table_is_refused(write_config):
    config = {**json.loads(SYNTHETIC.read_text()), "output_vocab_size": 701}
    with pytest.raises(InvalidConfigError, match="output_vocab_size"):
        account(str(write_config(config)))
