"""BART, mBART, Marian and Pegasus: an encoder and a decoder stack with cross-attention, biases everywhere, learned or
sinusoidal positions, and the heads of the class named in architectures.

Every expected figure is derived by hand from the config's numbers, or is a published count.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
BART = str(CONFIGS / "synthetic__bart.json")


def encoder_layer(d: int, ffn: int) -> int:
    """q, k, v, out_proj d² + d each; fc1 d · F + F; fc2 F · d + d; self_attn_layer_norm and final_layer_norm 2d each."""
    return 4 * (d * d + d) + d * ffn + ffn + ffn * d + d + 2 * 2 * d


def decoder_layer(d: int, ffn: int) -> int:
    """The encoder's layer, plus cross-attention (encoder_attn: four d² + d) and its LayerNorm."""
    return encoder_layer(d, ffn) + 4 * (d * d + d) + 2 * d


def test_bart_large_by_hand_is_its_published_size():
    # BartConfig's defaults are bart-large: d 1,024, 12 + 12 layers, FFN 4,096, vocabulary 50,265, 1,024 positions.
    # Outside the layers: the shared table (the head is tied to it), a learned position table of 1,024 + 2 rows and a
    # LayerNorm on the embeddings for each stack.
    d, ffn, vocab = 1024, 4096, 50265
    outside = vocab * d + 2 * (1024 + 2) * d + 2 * 2 * d
    total = outside + 12 * encoder_layer(d, ffn) + 12 * decoder_layer(d, ffn)
    assert account(str(CONFIGS / "synthetic__bart_defaults.json")).total_params == total
    assert round(total / 1e6) == 406  # facebook/bart-large: "406M"


def test_bart_stacks_by_hand():
    # d 64, encoder 2 layers (FFN 96), decoder 3 layers (FFN 80): the stacks number their layers apart.
    layers = {group.stack: (group.indices, group.params) for group in account(BART).layers}
    assert layers == {"encoder": ([0, 1], encoder_layer(64, 96)), "decoder": ([0, 1, 2], decoder_layer(64, 80))}


def test_learned_positions_keep_fairseqs_two_extra_rows():
    report = account(BART)
    assert report.outside_layers["embedding.model.encoder.embed_positions"] == (128 + 2) * 64
    assert report.outside_layers["embedding.model.decoder.embed_positions"] == (128 + 2) * 64


def test_sinusoidal_positions_are_frozen_parameters_of_max_position_embeddings_rows():
    # Marian and Pegasus: nn.Embedding(_freeze=True) that transformers counts as parameters.
    for config in ("synthetic__marian.json", "synthetic__pegasus.json"):
        assert account(str(CONFIGS / config)).outside_layers["embedding.model.encoder.embed_positions"] == 128 * 64


def test_untied_bart_holds_four_token_tables():
    # tie_word_embeddings false: shared, encoder.embed_tokens, decoder.embed_tokens and lm_head, each 1,000 · 64.
    tied, untied = account(BART), account(str(CONFIGS / "synthetic__bart_untied.json"))
    assert untied.total_params - tied.total_params == 3 * 1000 * 64


def test_the_seq2seq_lm_stores_final_logits_bias():
    (extra,) = account(BART).checkpoint_extras
    assert (extra.name, extra.elements) == ("final_logits_bias buffer", 1000)


def test_the_causal_lm_is_the_decoder_alone():
    # BartForCausalLM: the decoder's 3 layers (cross-attention included), its table, positions and LayerNorm.
    report = account(str(CONFIGS / "synthetic__bart_causal_lm.json"))
    assert report.total_params == 1000 * 64 + 130 * 64 + 2 * 64 + 3 * decoder_layer(64, 80)


def test_bart_classifier_defaults_to_three_labels():
    # BartConfig's num_labels is 3 when the config gives none: dense 64² + 64, out_proj 64 · 3 + 3.
    report = account(str(CONFIGS / "synthetic__bart_sequence_classification.json"))
    assert report.outside_layers["other.classification_head.out_proj"] == 64 * 3 + 3


def test_question_answering_has_two_outputs_whatever_id2label_says():
    report = account(str(CONFIGS / "synthetic__mbart_question_answering.json"))
    assert report.outside_layers["other.qa_outputs"] == 64 * 2 + 2


def test_mbart_and_pegasus_end_each_stack_with_a_layernorm():
    for config in ("synthetic__mbart.json", "synthetic__pegasus.json"):
        report = account(str(CONFIGS / config))
        assert (
            report.outside_layers["norm.final_norm"] == report.outside_layers["norm.model.encoder.layer_norm"] == 2 * 64
        )


def test_marian_separate_vocabularies_give_each_stack_its_table():
    # share_encoder_decoder_embeddings false: encoder table 1,000 rows, decoder table (the head's, tied) 1,200 rows.
    report = account(str(CONFIGS / "synthetic__marian_separate_vocabularies.json"))
    assert report.outside_layers["embedding.model.encoder.embed_tokens"] == 1000 * 64
    assert report.outside_layers["embedding.embed_tokens"] == 1200 * 64


def test_a_generated_token_attends_to_its_context_and_to_the_encoders_output():
    # 3 decoder layers of 2 heads of 32: 2 · 2 · (32 + 32) FLOPs per key, for self-attention over n keys and
    # cross-attention over n encoder positions.
    per_key = 2 * 2 * (32 + 32)
    assert flops(BART, 100).per_token.attention_scores == 3 * (per_key * 100 + per_key * 100)
