"""The BERT lineage: RoBERTa, XLM-RoBERTa, ELECTRA and DistilBERT, each with the heads of the class it was saved as.

Every expected figure is derived by hand from the config's numbers, or is a published count.
"""

import json

import pytest

from ffncalc import account

from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"


def post_ln_layer(hidden: int, ffn: int) -> int:
    """BERT's layer: q, k, v, output dense H² + H each; intermediate H · I + I; output I · H + H; two LayerNorms 2H each."""
    return 4 * (hidden * hidden + hidden) + hidden * ffn + ffn + ffn * hidden + hidden + 2 * 2 * hidden


def test_roberta_base_is_its_published_count(write_config):
    # roberta-base: distilroberta-base's config with 12 layers. H 768, FFN 3,072, vocabulary 50,265, 514 positions, one
    # token type; RobertaForMaskedLM: no pooler, lm_head dense (H² + H), layer_norm (2H), its bias (V), decoder tied.
    config = json.loads((BUNDLED / "distilbert__distilroberta-base.json").read_text()) | {"num_hidden_layers": 12}
    hidden, vocab = 768, 50265
    embeddings = vocab * hidden + 514 * hidden + 1 * hidden + 2 * hidden
    total = embeddings + 12 * post_ln_layer(hidden, 3072) + hidden * hidden + hidden + 2 * hidden + vocab
    assert total == 124_697_433  # huggingface.js: roberta-base's F32 tensors (its I64 514 are position_ids)
    assert account(str(write_config(config))).total_params == total


def test_xlm_roberta_large_by_hand():
    # H 1,024, 24 layers, FFN 4,096, vocabulary 250,002, 514 positions, one token type; the masked-LM head.
    hidden, vocab = 1024, 250002
    embeddings = vocab * hidden + 514 * hidden + hidden + 2 * hidden
    total = embeddings + 24 * post_ln_layer(hidden, 4096) + hidden * hidden + hidden + 2 * hidden + vocab
    assert account("FacebookAI/xlm-roberta-large").total_params == total == 560_142_482


def test_roberta_sequence_classifier_is_a_dense_layer_and_out_proj_without_pooler():
    # hidden 64, id2label of 3: classifier.dense 64 · 64 + 64, classifier.out_proj 64 · 3 + 3.
    report = account(str(CONFIGS / "synthetic__roberta_sequence_classification.json"))
    assert report.outside_layers["other.classifier.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier.out_proj"] == 64 * 3 + 3
    assert not any("pooler" in name for name in report.outside_layers)


def test_roberta_multiple_choice_scores_the_pooled_output_once():
    report = account(str(CONFIGS / "synthetic__roberta_multiple_choice.json"))
    assert report.outside_layers["other.roberta.pooler.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier"] == 64 + 1


def test_a_num_labels_key_sets_the_classifier_width():
    # RobertaForTokenClassification with "num_labels": 5 and no id2label: classifier 64 · 5 + 5.
    report = account(str(CONFIGS / "synthetic__roberta_token_classification.json"))
    assert report.outside_layers["other.classifier"] == 64 * 5 + 5


def test_the_bare_model_stores_its_modules_without_the_prefix():
    report = account(str(CONFIGS / "synthetic__roberta_model.json"))
    assert "other.pooler.dense" in report.outside_layers
    assert all(not name.split(".", 1)[1].startswith("roberta.") for name in report.outside_layers)


def test_an_untied_decoder_keeps_its_weight_and_bias_beside_the_heads_bias():
    # RobertaForCausalLM, is_decoder with add_cross_attention, tie_word_embeddings false, vocabulary 1,000, hidden 64:
    # lm_head.decoder 1,000 · 64 + 1,000 and lm_head.bias 1,000; each layer also attends to an encoder (4 · (64² + 64)).
    report = account(str(CONFIGS / "synthetic__roberta_decoder_untied.json"))
    assert report.components.lm_head == 64 * 64 + 64 + 1000 * 64 + 1000 + 1000
    assert report.components.cross_attention == 2 * 4 * (64 * 64 + 64)


def test_bert_question_answering_outputs_as_many_labels_as_id2label():
    report = account(str(CONFIGS / "synthetic__bert_question_answering.json"))
    assert report.outside_layers["other.qa_outputs"] == 64 * 3 + 3


def test_electra_small_discriminator_by_hand():
    # embeddings 128 wide: word (30,522), position (512) and token-type (2) tables, a LayerNorm, embeddings_project to
    # H 256 (128 · 256 + 256); 12 layers of FFN 1,024; the discriminator: dense H² + H, dense_prediction H + 1.
    width, hidden = 128, 256
    embeddings = (30522 + 512 + 2) * width + 2 * width + width * hidden + hidden
    total = embeddings + 12 * post_ln_layer(hidden, 1024) + hidden * hidden + hidden + hidden + 1
    assert account("google/electra-small-discriminator").total_params == total == 13_549_057


def test_electra_generator_predicts_through_the_embedding_width():
    # electra-base-generator: H 256, embeddings 768: generator_predictions.dense 256 · 768 + 768, its LayerNorm 2 · 768,
    # generator_lm_head tied to the word table, with a bias of 30,522. The transform is the masked-LM head's, as
    # BERT's cls.predictions.transform: the head holds it and the bias.
    report = account("google/electra-base-generator")
    assert report.outside_layers["lm_head.generator_predictions.dense"] == 256 * 768 + 768
    assert report.outside_layers["norm.generator_predictions.LayerNorm"] == 2 * 768
    assert report.components.lm_head == 256 * 768 + 768 + 30522 == 227_898


def test_distilbert_masked_lm_head_is_counted_as_the_head_as_berts_is():
    # vocab_transform dim² + dim and the tied vocab_projector's bias (V) under lm_head, as BERT's transform and bias;
    # vocab_layer_norm (2 · dim) under norm.
    report = account("distilbert/distilbert-base-uncased")
    assert report.components.lm_head == 768 * 768 + 768 + 30522 == 621_114
    assert report.components.other == 0


def test_electra_multiple_choice_summary_projects_to_the_labels_when_told():
    # summary_proj_to_labels with 3 labels: sequence_summary.summary 64 · 3 + 3, then classifier 64 · 1 + 1.
    report = account(str(CONFIGS / "synthetic__electra_multiple_choice.json"))
    assert report.outside_layers["other.sequence_summary.summary"] == 64 * 3 + 3
    assert report.outside_layers["other.classifier"] == 64 + 1


def test_distilbert_base_uncased_by_hand():
    # dim 768, 6 layers, hidden_dim 3,072, vocabulary 30,522, 512 positions, no token types; the masked-LM head:
    # vocab_transform dim² + dim, vocab_layer_norm 2 · dim, vocab_projector tied with its bias (V).
    hidden, vocab = 768, 30522
    embeddings = vocab * hidden + 512 * hidden + 2 * hidden
    total = embeddings + 6 * post_ln_layer(hidden, 3072) + hidden * hidden + hidden + 2 * hidden + vocab
    assert account("distilbert/distilbert-base-uncased").total_params == total == 66_985_530


def test_distilbert_question_answering_needs_two_labels(ffncalc, write_config):
    config = {"model_type": "distilbert", "architectures": ["DistilBertForQuestionAnswering"], "num_labels": 3}
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code != 0
    assert "needs 2 labels" in run.stderr


@pytest.mark.parametrize("config", ["FacebookAI__roberta-large", "google__electra-large-discriminator"])
def test_a_checkpoint_saved_before_4_31_may_store_position_ids(config):
    loaded = json.loads((BUNDLED / f"{config}.json").read_text())
    extras = {extra.name for extra in account(str(BUNDLED / f"{config}.json")).checkpoint_extras}
    # likely only when the config says an older transformers wrote it (electra's: 4.6; roberta-large's: none)
    assert ("embeddings.position_ids buffer" in extras) == ("transformers_version" in loaded)
