"""BertGeneration: BERT's layers and embeddings without token types or pooler, under a causal LM head whose bias is
lm_head.bias.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__bert-generation.json, synthetic__bert_generation.json,
synthetic__bert_generation_cross.json) and FlopCounterMode counts the same forward (synthetic__bert_generation).
"""

from ffncalc import account

SMALL = {
    "model_type": "bert-generation",
    "vocab_size": 320,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 96,
    "max_position_embeddings": 40,
    "is_decoder": True,
}
# one layer: q, k, v, o 64 × 64 + 64 each, the MLP 2 · 64 × 96 + 96 + 64, two LayerNorms 2 · 64 each
SMALL_LAYER = 4 * (64 * 64 + 64) + 2 * 64 * 96 + 96 + 64 + 2 * 2 * 64
# the word table 320 × 64, the position table 40 × 64, the embeddings' LayerNorm 2 · 64
SMALL_EMBEDDINGS = 320 * 64 + 40 * 64 + 2 * 64


def test_bert_generation_default_model_by_hand(write_config):
    # BertGenerationConfig(): H 1,024, 24 layers, 16 heads, MLP 4,096, vocabulary 50,358, 512 positions, tied; the
    # decoder's bias lm_head.bias 50,358
    hidden, vocab = 1024, 50358
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * 4096 + 4096 + hidden + 4 * hidden
    report = account(str(write_config({"model_type": "bert-generation"})))
    assert report.total_params == 24 * layer + vocab * hidden + 512 * hidden + 2 * hidden + vocab == 354_452_662


def test_bert_generation_untied_decoder_keeps_a_bias_of_its_own(write_config):
    # untied: lm_head.decoder 320 × 64 and its bias 320, beside lm_head.bias 320
    report = account(str(write_config(SMALL | {"tie_word_embeddings": False})))
    assert report.components.lm_head == 320 * 64 + 2 * 320
    assert report.total_params == 2 * SMALL_LAYER + SMALL_EMBEDDINGS + 320 * 64 + 2 * 320 == 102_976


def test_bert_generation_cross_attention_adds_a_sublayer_and_its_norm(write_config):
    report = account(str(write_config(SMALL | {"add_cross_attention": True})))
    cross = 4 * (64 * 64 + 64) + 2 * 64
    assert report.total_params == 2 * (SMALL_LAYER + cross) + SMALL_EMBEDDINGS + 320 == 115_712


def test_bert_generation_refuses_cross_attention_without_is_decoder(ffncalc, write_config):
    run = ffncalc("params", str(write_config(SMALL | {"is_decoder": False, "add_cross_attention": True})))
    assert run.exit_code != 0
    assert "add_cross_attention: cross-attention needs is_decoder" in run.stderr
