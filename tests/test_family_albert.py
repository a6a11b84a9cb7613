"""ALBERT: BERT's post-LN layers shared across the depth, embeddings narrower than the layers.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
GROUPS = str(CONFIGS / "synthetic__albert_groups_pretraining_untied.json")


def test_albert_defaults_by_hand(write_config):
    # AlbertConfig(), AlbertForMaskedLM: vocabulary 30,000, tables E 128 wide (512 positions, 2 token types) and their
    # LayerNorm; the mapping E → H 4,096 with its bias; ONE layer (1 group of 1) held for all 12 steps: q, k, v, dense
    # H² + H each, ffn and ffn_output (16,384) with biases, two LayerNorms; the head: dense H → E, LayerNorm 2E, bias V.
    vocab, width, hidden, ffn = 30000, 128, 4096, 16384
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    embeddings = (vocab + 512 + 2) * width + 2 * width + width * hidden + hidden
    total = embeddings + layer + hidden * width + width + 2 * width + vocab
    assert total == 206_368_944
    assert account(str(write_config({"model_type": "albert"}))).total_params == total


def test_albert_holds_each_group_layer_once_however_many_steps_run_it():
    # 2 groups of 2 layers: 4 layers' parameters, q, k, v, dense 64² + 64 each
    report = account(GROUPS)
    assert report.components.attention == 4 * 4 * (64 * 64 + 64)


def test_albert_runs_every_layer_of_a_group_at_every_step_of_the_stack():
    # 5 steps over 2 groups: int(i / 2.5) runs group 0 at steps 0, 1, 2 and group 1 at 3, 4; each step runs its 2
    # layers, so 10 layers a token: FFN 2 · (64 · 96 + 96 · 64) FLOPs each (biases are not multiplies)
    assert flops(GROUPS, 1).per_token.ffn == 10 * 2 * (64 * 96 + 96 * 64)


def test_albert_sentence_order_head_is_num_labels_wide():
    # sop_classifier.classifier: 64 → 3 labels (id2label), on the pooler (albert.pooler, a linear layer)
    report = account(GROUPS)
    assert report.outside_layers["other.sop_classifier.classifier"] == 64 * 3 + 3
    assert report.outside_layers["other.albert.pooler"] == 64 * 64 + 64


def test_more_groups_than_layers_is_refused_naming_the_field(write_config):
    config = {"model_type": "albert", "num_hidden_layers": 2, "num_hidden_groups": 3}
    with pytest.raises(InvalidConfigError, match=r"num_hidden_groups \(3\) exceeds num_hidden_layers \(2\)"):
        account(str(write_config(config)))
