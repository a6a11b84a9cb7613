"""Nyströmformer: BERT's embeddings (max_position_embeddings + 2 position rows), post-LN layers and masked-LM head;
softmax over every key while num_landmarks equals segment_means_seq_len (transformers' rule), and a depthwise
convolution of the values beside it.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__nystromformer.json: 109,122,240,
NystromformerForMaskedLM; synthetic__nystromformer.json: 113,064), and a forward pass of synthetic__nystromformer to
FlopCounterMode by tests/test_flops.py (the convolution, which FlopCounterMode finds in the attention, counted under
other). Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__nystromformer.json")


def test_default_masked_lm_by_hand(write_config):
    # NystromformerConfig(): vocabulary 30,000, hidden 768, 12 layers of 12 heads, MLP 3,072, 510 + 2 positions, two
    # token types, tied, conv_kernel_size 65. A layer: q, k, v, output dense with biases, the convolution 12 · 65, the
    # MLP with biases, two LayerNorms. cls.predictions: the transform and its LayerNorm, the decoder's bias.
    v, h, i = 30000, 768, 3072
    embeddings = v * h + 512 * h + 2 * h + 2 * h
    layer = 4 * (h * h + h) + 12 * 65 + h * i + i + i * h + h + 4 * h
    head = h * h + h + 2 * h + v
    report = account(str(write_config({"model_type": "nystromformer"})))
    assert report.model_class == "NystromformerForMaskedLM"
    assert report.total_params == embeddings + 12 * layer + head == 109_122_240
    assert report.components.mixer == 12 * 12 * 65


def test_every_key_is_attended_and_the_values_convolved():
    # synthetic: 4 heads of 16, conv_kernel_size 5, 2 layers, 16 tokens. Scores per key 2 · 4 · (16 + 16); the
    # convolution 2 · 64 channels · 5 a token. FlopCounterMode's attention: 1,200,128 = projections 16 · 2 · 2 · 4 · 64²,
    # the scores and the convolution.
    report = flops(SYNTHETIC, 16, causal=False).prefill
    scores = 16 * 16 * 2 * 2 * 4 * 32
    conv = 16 * 2 * 2 * 64 * 5
    assert report.attention_scores == scores
    assert report.attention_projections + scores + conv == 1_200_128
    assert report.total == 2_772_992


def test_nystrom_approximation_is_refused(write_config):
    with pytest.raises(InvalidConfigError, match="num_landmarks"):
        account(str(write_config({"model_type": "nystromformer", "segment_means_seq_len": 512})))


def test_a_null_convolution_is_refused_as_transformers_refuses_it(write_config):
    # NystromformerConfig's conv_kernel_size is an int (strict): transformers 5.24 refuses null, though its modeling
    # code would skip the convolution
    with pytest.raises(InvalidConfigError, match="conv_kernel_size"):
        account(str(write_config({"model_type": "nystromformer", "conv_kernel_size": None})))
