"""ModernBERT: a pre-LN encoder with fused projections, GeGLU, and local attention on two layers in three.

Every expected figure is derived by hand from the config's numbers, or is a published count.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
MODERNBERT = str(CONFIGS / "synthetic__modernbert.json")


def test_modernbert_base_by_hand_is_its_published_size(write_config):
    # ModernBertConfig's defaults are ModernBERT-base: H 768, 22 layers, FFN 1,152, vocabulary 50,368, no biases.
    # A layer: Wqkv H · 3H, Wo H², Wi H · 2I (the activated half and its gate), Wo I · H, attn_norm and mlp_norm (weight
    # only); layer 0 has no attn_norm. Outside: the token table, the embeddings' norm, the final norm.
    hidden, ffn, vocab = 768, 1152, 50368
    layer = 3 * hidden * hidden + hidden * hidden + 2 * hidden * ffn + ffn * hidden + 2 * hidden
    embeddings, final_norm = vocab * hidden + hidden, hidden
    total = embeddings + 22 * layer - hidden + final_norm  # layer 0 without attn_norm
    assert account(str(write_config({"model_type": "modernbert"}))).total_params == total
    assert round(total / 1e6) == 149  # "ModernBERT-base … 149M parameters" (its model card)


def test_the_first_layer_reads_the_embeddings_norm_instead_of_its_own():
    first, *_ = account(MODERNBERT).layers
    assert first.indices == [0]
    assert "norm.attn_norm" not in first.parts and "norm.mlp_norm" in first.parts


def test_sliding_layers_attend_to_half_of_local_attention_either_side():
    # global_attn_every_n_layers 2: layers 0 and 2 global; local_attention 16: 8 keys either side and the token's own.
    windows = {index: group.window for group in account(MODERNBERT).layers for index in group.indices}
    assert windows == {0: None, 1: 2 * (16 // 2) + 1, 2: None, 3: 17}


def test_an_odd_local_attention_rounds_down_on_each_side():
    # local_attention 33: 16 keys either side, 33 keys in all; layer_types marks layer 1 global.
    windows = {
        index: group.window
        for group in account(str(CONFIGS / "synthetic__modernbert_layer_types.json")).layers
        for index in group.indices
    }
    assert windows == {0: 33, 1: None, 2: 33, 3: 33}


def test_sliding_layers_stop_growing_at_their_window():
    # 4 heads of 16: 2 · 4 · (16 + 16) FLOPs per key; at 8k layers 0 and 2 read 8,192 keys, layers 1 and 3 read 17.
    report = flops(MODERNBERT, 8192)
    per_key = 2 * 4 * (16 + 16)
    assert report.per_token.attention_scores == per_key * (2 * 8192 + 2 * 17)


def test_masked_lm_head_is_a_dense_a_norm_and_the_tied_decoder():
    # classifier_bias: head.dense 64² + 64; norm_bias: head.norm 2 · 64; decoder_bias false: no bias; decoder tied.
    report = account(MODERNBERT)
    assert report.outside_layers["other.head.dense"] == 64 * 64 + 64
    assert report.outside_layers["norm.head.norm"] == 2 * 64
    assert report.components.lm_head == 0


def test_classifiers_sit_on_the_head():
    report = account(str(CONFIGS / "synthetic__modernbert_multiple_choice.json"))
    assert report.outside_layers["other.head.dense"] == 64 * 64 + 64  # classifier_bias
    assert report.outside_layers["other.classifier"] == 64 + 1
