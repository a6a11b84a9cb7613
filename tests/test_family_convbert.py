"""ConvBERT: ELECTRA's embeddings and generator head, BERT's layers with half of each attention a dynamic convolution.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SMALL = str(CONFIGS / "synthetic__convbert.json")
GROUPED = str(CONFIGS / "synthetic__convbert_groups_decoder.json")


def test_convbert_defaults_by_hand(write_config):
    # ConvBertConfig(), ConvBertForMaskedLM: V 30,522, E = H 768 (no embeddings_project), 512 positions, 2 token types
    # and a LayerNorm. 12 layers of h = 12 // 2 = 6 heads of d = 768 / 6 / 2 = 64 (h · d = 384): q, k, v 768 → 384
    # biased; depthwise 768 · 9, pointwise 384 · 768, their bias 384; conv_kernel_layer 384 → 6 · 9 biased;
    # conv_out_layer 768 → 384 biased; output dense 768² + 768; MLP 768 ↔ 3,072 biased; two LayerNorms. Head:
    # generator_predictions 768² + 768 and its LayerNorm, the tied decoder's bias 30,522.
    vocab, hidden, width, kernel, ffn = 30522, 768, 384, 9, 3072
    attention = 3 * (hidden * width + width) + hidden * kernel + width * hidden + width
    attention += width * 6 * kernel + 6 * kernel + hidden * width + width + hidden * hidden + hidden
    layer = attention + hidden * ffn + ffn + ffn * hidden + hidden + 2 * 2 * hidden
    total = (vocab + 512 + 2) * hidden + 2 * hidden + 12 * layer + hidden * hidden + hidden + 2 * hidden + vocab
    assert total == 106_303_170
    assert account(str(write_config({"model_type": "convbert"}))).total_params == total


def test_convbert_attention_projections_include_the_convolution_half():
    # synthetic__convbert: H 64, h = 2, h · d = 32, kernel 5, 2 layers. Per token and layer: q, k, v 3 · 2 · 64 · 32,
    # depthwise 2 · 64 · 5, pointwise 2 · 32 · 64, conv_kernel_layer 2 · 32 · 10, conv_out_layer 2 · 64 · 32, output
    # dense 2 · 64²
    per_layer = 3 * 2 * 64 * 32 + 2 * 64 * 5 + 2 * 32 * 64 + 2 * 32 * 10 + 2 * 64 * 32 + 2 * 64 * 64
    assert flops(SMALL, 16).per_token.attention_projections == 2 * per_layer == 59_904


def test_convbert_scores_run_over_the_attention_half_of_the_heads():
    # 2 heads of 16 per layer: 2 · 2 · (16 + 16) FLOPs a key, 2 layers, at context 100
    assert flops(SMALL, 100).per_token.attention_scores == 2 * 2 * 2 * (16 + 16) * 100 == 25_600


def test_convbert_dynamic_convolution_counts_under_other():
    # per token: the dynamic convolution 2 · 32 channels · 5 rows per layer, and the model-level linears:
    # embeddings_project 32 → 64 and generator_predictions.dense 64 → 32
    other = 2 * 2 * 32 * 5 + 2 * 32 * 64 + 2 * 64 * 32
    assert flops(SMALL, 16).per_token.other == other == 8_832


def test_grouped_mlp_is_stored_by_group_and_holds_a_groups_share_of_the_weights():
    # num_groups 2, H 64, I 96: intermediate.dense [2, 32, 48] + bias 96, output.dense [2, 48, 32] + bias 64
    tensors = checkpoint_tensors(load_config(GROUPED).spec)
    assert tensors["convbert.encoder.layer.0.intermediate.dense.weight"] == (2, 32, 48)
    assert tensors["convbert.encoder.layer.0.output.dense.weight"] == (2, 48, 32)
    assert account(GROUPED).components.ffn == 2 * (2 * 32 * 48 + 96 + 2 * 48 * 32 + 64) == 12_608


def test_fewer_heads_than_head_ratio_leave_one_head():
    # 3 heads // head_ratio 4 = 0: one head of 64 / 2 = 32, whose convolution kernel is 3 wide (1 · 3 outputs)
    tensors = checkpoint_tensors(load_config(GROUPED).spec)
    assert tensors["convbert.encoder.layer.0.attention.self.query.weight"] == (32, 64)
    assert tensors["convbert.encoder.layer.0.attention.self.conv_kernel_layer.weight"] == (3, 32)


def test_cross_attention_has_a_convolution_half_of_its_own():
    tensors = checkpoint_tensors(load_config(GROUPED).spec)
    assert tensors["convbert.encoder.layer.1.crossattention.self.key_conv_attn_layer.depthwise.weight"] == (64, 1, 3)


def test_an_odd_half_head_is_refused_naming_the_field(write_config):
    # 4 heads // 2 = 2 heads of 66 / 2 = 33: half of 33 cannot be a head of the attention
    config = {"model_type": "convbert", "hidden_size": 66, "num_attention_heads": 4, "embedding_size": 66}
    with pytest.raises(InvalidConfigError, match=r"hidden_size / \(num_attention_heads // head_ratio\) \(33\) is odd"):
        account(str(write_config(config)))
