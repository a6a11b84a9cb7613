"""YOSO: BERT's embeddings (max_position_embeddings + 2 position rows), post-LN layers and masked-LM head, with
attention weighted in expectation by hash collisions: a q · k product and a weighted sum of the values per key.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__yoso.json: 127,449,945, YosoForMaskedLM;
synthetic__yoso.json: 113,152), and a forward pass of synthetic__yoso to FlopCounterMode by tests/test_flops.py.
Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__yoso.json")


def test_default_masked_lm_by_hand(write_config):
    # YosoConfig(): vocabulary 50,265, hidden 768, 12 layers of 12 heads, MLP 3,072, 4,096 + 2 positions, one token
    # type, tied. Embeddings: the tables and a LayerNorm. A layer: q, k, v, output dense with biases, the MLP with
    # biases, two LayerNorms. cls.predictions: the transform (768² + bias) and its LayerNorm, the decoder's bias.
    v, h, i = 50265, 768, 3072
    embeddings = v * h + 4098 * h + h + 2 * h
    layer = 4 * (h * h + h) + h * i + i + i * h + h + 4 * h
    head = h * h + h + 2 * h + v
    report = account(str(write_config({"model_type": "yoso"})))
    assert report.model_class == "YosoForMaskedLM"
    assert report.total_params == embeddings + 12 * layer + head == 127_449_945


def test_bare_model_has_no_pooler(write_config):
    # YosoModel: the masked LM less its head (768² + 768 + 2 · 768 + 50,265), as transformers 5.24 builds it on meta
    config = {"model_type": "yoso", "architectures": ["YosoModel"]}
    assert account(str(write_config(config))).total_params == 126_807_552


def test_expected_collisions_cost_what_softmax_scores_cost():
    # per key 2 · 4 heads · 16 (q · k) + 2 · 4 · 16 (the weighted values), 2 layers; 16 tokens, each reading all 16
    report = flops(SYNTHETIC, 16, causal=False).prefill
    assert report.attention_scores == 16 * 16 * 2 * (2 * 4 * 16 + 2 * 4 * 16) == 131_072
    # FlopCounterMode (tests/expected/flop_counter.json): attention 1,179,648 = these and q, k, v, o 4 · 64² a token
    assert report.attention_projections + report.attention_scores == 16 * 2 * 2 * 4 * 64 * 64 + 131_072 == 1_179_648


@pytest.mark.parametrize(
    "key, value", [("use_expectation", False), ("conv_window", 65)], ids=["sampled hashes", "convolution"]
)
def test_what_is_not_laid_out_is_refused(write_config, key, value):
    with pytest.raises(InvalidConfigError, match=key):
        account(str(write_config({"model_type": "yoso", key: value})))
