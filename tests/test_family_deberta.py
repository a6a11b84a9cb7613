"""DeBERTa (v1), DeBERTa-v2 and -v3: BERT's encoder with disentangled attention over a table of relative positions.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
V3 = str(CONFIGS / "synthetic__deberta_v3.json")


def test_relative_embeddings_hold_two_rows_per_bucket():
    # position_buckets 16: rel_embeddings of 2 · 16 rows of hidden 64, normalised by a LayerNorm (norm_rel_ebd).
    report = account(V3)
    assert report.outside_layers["other.deberta.encoder.rel_embeddings"] == 2 * 16 * 64
    assert report.outside_layers["norm.deberta.encoder.LayerNorm"] == 2 * 64


def test_without_buckets_the_span_is_max_relative_positions():
    # max_relative_positions 24 and no buckets: 2 · 24 rows.
    report = account(str(CONFIGS / "synthetic__deberta_v2_unshared.json"))
    assert report.outside_layers["other.deberta.encoder.rel_embeddings"] == 2 * 24 * 64


def test_deberta_v3_has_no_absolute_positions_or_token_types():
    # position_biased_input false, type_vocab_size 0: the word table and the embeddings' LayerNorm only.
    names = {name for name in account(V3).outside_layers if ".embeddings." in name}
    assert names == {"norm.deberta.embeddings.LayerNorm"}


def test_unshared_keys_project_the_relative_embeddings_with_their_own_weights():
    # share_att_key false, c2p and p2c: pos_key_proj and pos_query_proj, hidden 64 → 4 heads of 8 (attention_head_size).
    (layer,) = account(str(CONFIGS / "synthetic__deberta_v2_unshared.json")).layers
    assert layer.parts["attention.pos_key_proj"] == layer.parts["attention.pos_query_proj"] == 64 * 32 + 32
    assert layer.parts["attention.q"] == 64 * 32 + 32
    assert layer.parts["attention.o"] == 64 * 64 + 64  # the output dense reads hidden_size, whatever the heads' width


def test_shared_keys_add_no_weights():
    (layer,) = account(V3).layers
    assert not any(part.startswith("attention.pos_") for part in layer.parts)


def test_each_relative_term_costs_a_token_its_heads_against_every_relative_position():
    # c2p and p2c: each 2 · 4 heads · 16 · (2 · 16 buckets) FLOPs per token and layer, 2 layers; the masked-LM
    # transform (64 · 64) is the rest of "other".
    relative = 2 * 2 * (2 * 4 * 16 * 2 * 16)
    assert flops(V3, 64).per_token.other == relative + 2 * 64 * 64


def test_the_v2_convolution_runs_once_after_the_first_layer():
    # conv_kernel_size 3, conv_groups 2: conv.conv weight [64, 32, 3] and bias 64, and its LayerNorm.
    report = account(str(CONFIGS / "synthetic__deberta_v2_conv_classifier.json"))
    assert report.outside_layers["mixer.deberta.encoder.conv.conv.weight"] == 64 * 32 * 3
    assert report.outside_layers["mixer.deberta.encoder.conv.conv.bias"] == 64
    assert report.outside_layers["norm.deberta.encoder.conv.LayerNorm"] == 2 * 64


def test_sequence_classifier_reads_a_pooler():
    # pooler.dense pooler_hidden_size² + bias, classifier 64 · 3 + 3 (id2label of 3).
    report = account(str(CONFIGS / "synthetic__deberta_v2_conv_classifier.json"))
    assert report.outside_layers["other.pooler.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier"] == 64 * 3 + 3


def test_narrower_embeddings_are_projected_without_bias():
    # embedding_size 32: word (1,000), position (128) and token-type (2) tables 32 wide; embed_proj 32 · 64, no bias.
    report = account(str(CONFIGS / "synthetic__deberta_v2_unshared.json"))
    assert report.outside_layers["embedding.deberta.embeddings.embed_proj"] == 32 * 64
    assert report.outside_layers["embedding.embed_tokens"] == 1000 * 32


def test_the_new_masked_lm_head_scores_against_the_word_table_itself():
    # legacy false: lm_predictions.lm_head dense 64² + 64, LayerNorm 2 · 64, bias 1,000; the word table is the decoder.
    report = account(str(CONFIGS / "synthetic__deberta_v2_new_head.json"))
    assert report.components.lm_head == 64 * 64 + 64 + 1000
    assert report.outside_layers["lm_head.lm_head"] == 1000  # lm_predictions.lm_head.bias: no weight of its own


# --- DeBERTa v1 (model_type deberta) ----------------------------------------------------------------------------------

V1 = str(CONFIGS / "synthetic__deberta.json")
V1_TALKING = str(CONFIGS / "synthetic__deberta_talking_head_untied.json")


def test_deberta_v1_defaults_by_hand(write_config):
    # DebertaConfig(), DebertaForMaskedLM: vocabulary 50,265, H 768, 512 positions, no token types, no relative
    # attention; 12 post-LN layers: in_proj 3H² (no bias), q_bias and v_bias H each, output dense H² + H, FFN 3,072
    # with biases, two LayerNorms; the legacy head: transform H² + H, LayerNorm 2H, bias V, the decoder tied.
    hidden, ffn, vocab = 768, 3072, 50265
    layer = 3 * hidden * hidden + 2 * hidden + hidden * hidden + hidden + 2 * hidden * ffn + ffn + hidden + 4 * hidden
    total = (vocab + 512) * hidden + 2 * hidden + 12 * layer + hidden * hidden + 3 * hidden + vocab
    assert total == 124_685_913
    assert account(str(write_config({"model_type": "deberta"}))).total_params == total


def test_deberta_v1_fuses_q_k_v_without_a_bias_and_keeps_q_and_v_biases_apart():
    (layer,) = account(V1).layers
    assert layer.parts["attention.q"] == layer.parts["attention.k"] == layer.parts["attention.v"] == 64 * 64
    assert layer.parts["attention.q_bias"] == layer.parts["attention.v_bias"] == 64


def test_deberta_v1_projects_relative_keys_without_a_bias_and_relative_queries_with_one():
    # c2p: pos_proj 64 × 64; p2c: pos_q_proj 64 × 64 + 64
    (layer,) = account(V1).layers
    assert layer.parts["attention.pos_proj"] == 64 * 64
    assert layer.parts["attention.pos_q_proj"] == 64 * 64 + 64


def test_deberta_v1_relative_table_spans_max_position_embeddings_without_max_relative_positions():
    # max_relative_positions -1: 2 · 130 rows of 64
    assert account(V1).outside_layers["other.deberta.encoder.rel_embeddings"] == 2 * 130 * 64


def test_deberta_v1_relative_terms_cost_each_token_its_heads_against_every_relative_position():
    # c2p and p2c: each 2 · 4 heads · 16 · (2 · 130) FLOPs per token and layer, 2 layers; the head's transform
    # (2 · 64 · 64) is the rest of "other".
    assert flops(V1, 64).per_token.other == 2 * 2 * (2 * 4 * 16 * 2 * 130) + 2 * 64 * 64


def test_deberta_v1_talking_heads_are_heads_squared_and_their_flops_are_said_to_be_left_out():
    report = account(V1_TALKING)
    (layer,) = report.layers
    assert layer.parts["attention.head_logits_proj"] == layer.parts["attention.head_weights_proj"] == 4 * 4
    assert any(note.startswith("talking_head:") for note in report.notes)
