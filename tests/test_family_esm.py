"""ESM-2: BERT's modules pre-LN, rotary positions, and a contact head over every layer's attention maps.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, its FLOPs to
FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

ROTARY = str(ROOT / "tests" / "configs" / "synthetic__esm.json")


def test_esm_rotary_masked_lm_by_hand():
    # 33 words × 64, no position table; 2 pre-LN layers (q, k, v, o 64² + 64 each, MLP 96 with biases, two
    # LayerNorms); emb_layer_norm_after; contact_head.regression (2 layers × 4 heads → 1, with its bias); the head's
    # dense and layer_norm, the decoder tied to the word table, lm_head.bias.
    layer = 4 * (64 * 64 + 64) + 2 * 64 * 96 + 96 + 64 + 2 * 2 * 64
    total = 33 * 64 + 2 * layer + 2 * 64 + (2 * 4 + 1) + (64 * 64 + 64) + 2 * 64 + 33
    assert total == 65_258
    assert account(ROTARY).total_params == total


def test_esm_contact_head_costs_a_token_nothing():
    # it reads the attention maps of a pair of tokens, never a token's state: other is the head's dense alone
    assert flops(ROTARY, 1).per_token.other == 2 * 64 * 64


def test_esm_keeps_rotary_inverse_frequencies_as_a_buffer_checkpoints_store():
    # head size 16: 8 inverse frequencies, a persistent buffer of the model (its layers' copies in older checkpoints)
    report = account(ROTARY)
    assert report.total_params == 65_258  # not a parameter
    extras = {extra.name: extra for extra in report.checkpoint_extras}
    assert extras["rotary_embeddings.inv_freq buffer"].elements == 8


def test_esm_without_vocab_size_is_refused_naming_the_field(write_config):
    with pytest.raises(InvalidConfigError, match="vocab_size: EsmConfig has no default"):
        account(str(write_config({"model_type": "esm"})))


def test_esmfold_is_refused_naming_the_field(write_config):
    with pytest.raises(InvalidConfigError, match="is_folding_model"):
        account(str(write_config({"model_type": "esm", "vocab_size": 33, "is_folding_model": True})))
