"""BERT's descendants that keep its post-LN layers: Data2Vec-Text (RoBERTa's model), ERNIE (a task-type table),
RoFormer (rotary positions, ELECTRA's narrower embeddings) and LayoutLM (tables for a token's box on the page).

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def bert_base_masked_lm(vocab: int, positions: int, token_types: int) -> int:
    """BERT-base's masked LM by hand: tables and their LayerNorm, 12 post-LN layers of H 768 and FFN 3,072 (every
    linear with its bias, two LayerNorms), the head's transform (H² + H, LayerNorm 2H) and its bias V."""
    hidden, ffn = 768, 3072
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    return (vocab + positions + token_types) * hidden + 2 * hidden + 12 * layer + hidden * hidden + 3 * hidden + vocab


def test_ernie_defaults_are_bert_base_as_a_masked_lm(write_config):
    # ErnieConfig(): vocabulary 30,522, 512 positions, 2 token types, no task table (use_task_id false)
    assert bert_base_masked_lm(30522, 512, 2) == 109_514_298
    assert account(str(write_config({"model_type": "ernie"}))).total_params == 109_514_298


def test_data2vec_text_defaults_are_roberta_base_with_bert_vocabulary(write_config):
    # Data2VecTextConfig(): RoBERTa's layout and head with vocabulary 30,522, 512 positions, 2 token types
    report = account(str(write_config({"model_type": "data2vec-text"})))
    assert report.total_params == bert_base_masked_lm(30522, 512, 2)


def test_ernie_task_ids_add_a_task_type_table():
    # use_task_id, task_type_vocab_size 5: 5 × hidden 64
    report = account(str(CONFIGS / "synthetic__ernie_task_ids.json"))
    assert report.outside_layers["embedding.ernie.embeddings.task_type_embeddings"] == 5 * 64


def test_roformer_has_a_sinusoidal_table_per_head_and_no_position_table():
    # max_position_embeddings 130 × head size 64 / 4; the word and token-type tables are embedding_size 32 wide
    report = account(str(CONFIGS / "synthetic__roformer.json"))
    assert report.outside_layers["embedding.roformer.encoder.embed_positions"] == 130 * 16
    assert not any("position_embeddings" in name for name in report.outside_layers)
    assert report.outside_layers["embedding.roformer.embeddings.token_type_embeddings"] == 2 * 32
    assert report.outside_layers["other.roformer.embeddings_project"] == 32 * 64 + 64


def test_roformer_masked_lm_transform_returns_to_the_embedding_width():
    # cls.predictions.transform: dense 64 → 32 with its bias, LayerNorm 2 · 32
    report = account(str(CONFIGS / "synthetic__roformer.json"))
    assert report.outside_layers["lm_head.cls.predictions.transform.dense"] == 64 * 32 + 32
    assert report.outside_layers["norm.cls.predictions.transform.LayerNorm"] == 2 * 32


def test_roformer_multiple_choice_projects_the_summary_only_when_the_config_asks():
    # summary_use_proj and summary_proj_to_labels with 3 labels: sequence_summary.summary 64 → 3, classifier 64 → 1
    report = account(str(CONFIGS / "synthetic__roformer_multiple_choice.json"))
    assert report.outside_layers["other.sequence_summary.summary"] == 64 * 3 + 3
    assert report.outside_layers["other.classifier"] == 64 + 1


def test_layoutlm_defaults_are_bert_base_with_four_box_tables_and_its_pooler(write_config):
    # LayoutLMConfig(), LayoutLMForMaskedLM: BERT-base's masked LM, x, y, h and w tables of 1,024 rows × 768, and the
    # pooler (H² + H), which LayoutLMModel always builds
    total = bert_base_masked_lm(30522, 512, 2) + 4 * 1024 * 768 + 768 * 768 + 768
    assert total == 113_250_618
    assert account(str(write_config({"model_type": "layoutlm"}))).total_params == total


def test_layoutlm_is_never_a_decoder(write_config):
    # LayoutLMConfig has no is_decoder or add_cross_attention: the keys change nothing
    config = {"model_type": "layoutlm", "is_decoder": True, "add_cross_attention": True}
    assert account(str(write_config(config))).total_params == 113_250_618
