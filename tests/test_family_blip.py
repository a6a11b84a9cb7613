"""BLIP-2, InstructBLIP and InstructBLIP-Video: a ViT with a class token and a fused qkv, the Q-Former (learned queries,
BERT-style layers, cross-attention to the image every cross_attention_frequency layers, a query FFN and a text FFN)
and a language model built whole from text_config.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/: synthetic__blip-2.json 229,192; synthetic__blip-2_t5.json 115,440;
synthetic__instructblip.json 300,384; synthetic__instructblipvideo.json 135,600; defaults__blip-2.json 1,216,944,384;
defaults__instructblip.json and defaults__instructblipvideo.json 1,297,466,112).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.errors import UsageError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
BLIP2 = str(CONFIGS / "synthetic__blip-2.json")
BLIP2_T5 = str(CONFIGS / "synthetic__blip-2_t5.json")
INSTRUCTBLIP = str(CONFIGS / "synthetic__instructblip.json")
INSTRUCTBLIP_VIDEO = str(CONFIGS / "synthetic__instructblipvideo.json")


def linear(inputs, outputs):
    return inputs * outputs + outputs  # every Q-Former and vision linear is biased


def test_blip2s_vision_model_holds_a_class_token_a_fused_qkv_and_positions_for_every_patch_by_hand():
    report = account(BLIP2)
    # 56 px / 14 = 4 × 4 patches and the class token: 17 positions of 48; qkv 48 → 144 with its 144-wide bias (q,
    # zeros for k, v), a biased projection, fc1 48 → 80, fc2 80 → 48, two LayerNorms
    layer = linear(48, 144) + linear(48, 48) + linear(48, 80) + linear(80, 48) + 2 * 2 * 48
    embeddings = 48 + (48 * 3 * 14 * 14 + 48) + 17 * 48
    assert report.components.vision == embeddings + 2 * layer + 2 * 48


def test_blip2s_q_former_cross_attends_in_layers_0_and_2_and_runs_only_its_query_ffn_by_hand():
    report = account(BLIP2)
    # 8 queries of 32; layernorm; each layer: self-attention (q, k, v, dense and a LayerNorm) and the query FFN
    # (32 → 40 → 32, a LayerNorm); layers 0 and 2 (cross_attention_frequency 2) cross-attend, k and v reading the
    # tower's 48; language_projection 32 → 64
    self_attention = 4 * linear(32, 32) + 2 * 32
    cross_attention = 2 * linear(32, 32) + 2 * linear(48, 32) + 2 * 32
    query_ffn = linear(32, 40) + linear(40, 32) + 2 * 32
    layers = 3 * (self_attention + query_ffn) + 2 * cross_attention
    assert report.components.projector == 8 * 32 + 2 * 32 + layers + linear(32, 64)


def test_blip2s_opt_is_tied_by_its_own_flag_and_kept_under_language_model():
    report = account(BLIP2)
    # OPT: 1,000 × 64 tokens, 128 + 2 positions, 2 layers of four biased projections, fc1, fc2 and two LayerNorms,
    # a final LayerNorm; its head is its token table (OPTConfig's tie_word_embeddings, true by default)
    layer = 4 * linear(64, 64) + linear(64, 96) + linear(96, 64) + 2 * 2 * 64
    assert report.language_model_params == 1000 * 64 + 130 * 64 + 2 * layer + 2 * 64
    assert report.total_params == 229_192  # transformers 5.24 (synthetic__blip-2.json)


def test_blip2_with_t5_keeps_the_whole_t5_under_language_model_and_t5_ties_its_head_whatever_it_says():
    report = account(BLIP2_T5)
    # T5 (tie_word_embeddings false in text_config): transformers 5 ties its head to shared all the same, so no
    # lm_head; 2 encoder blocks and 1 decoder block of 4 heads × 8, gated-GELU 32 → 48
    attention = 4 * 32 * 32
    ffn = 3 * 32 * 48
    buckets = 32 * 4
    encoder = 2 * (attention + ffn + 2 * 32) + buckets + 32
    decoder = 2 * attention + ffn + 3 * 32 + buckets + 32
    assert report.language_model_params == 500 * 32 + encoder + decoder
    names = load_config(BLIP2_T5).spec.names
    assert (names.embed_tokens, names.lm_head) == ("language_model.shared", "language_model.lm_head")


def test_blip2s_q_former_with_text_input_holds_the_text_ffn_too_by_hand():
    report = account(BLIP2_T5)
    # use_qformer_text_input: each layer holds intermediate and output beside the query FFN; cross_attention_frequency
    # 1: both layers cross-attend to the tower's 40 (qkv_bias false: qkv has no bias)
    ffn = linear(24, 36) + linear(36, 24) + 2 * 24
    layer = (4 * linear(24, 24) + 2 * 24) + (2 * linear(24, 24) + 2 * linear(40, 24) + 2 * 24) + 2 * ffn
    assert report.components.projector == 6 * 24 + 2 * 24 + 2 * layer + linear(24, 32)
    vision_layer = 40 * 120 + linear(40, 40) + linear(40, 72) + linear(72, 40) + 2 * 2 * 40
    assert report.components.vision == 40 + (40 * 3 * 14 * 14 + 40) + 10 * 40 + 2 * vision_layer + 2 * 40


def test_instructblips_q_former_embeds_the_instruction_and_holds_the_text_ffn_in_every_layer_by_hand():
    report = account(INSTRUCTBLIP)
    # word (120) and position (20) embeddings of 32 and their LayerNorm in place of BLIP-2's layernorm
    self_attention = 4 * linear(32, 32) + 2 * 32
    cross_attention = 2 * linear(32, 32) + 2 * linear(48, 32) + 2 * 32
    ffn = linear(32, 40) + linear(40, 32) + 2 * 32
    layers = 3 * (self_attention + 2 * ffn) + 2 * cross_attention
    embeddings = 120 * 32 + 20 * 32 + 2 * 32
    assert report.components.projector == 8 * 32 + embeddings + layers + linear(32, 64)
    assert report.total_params == 300_384  # transformers 5.24 (synthetic__instructblip.json)


def test_instructblip_videos_opt_untied_by_its_own_flag_keeps_its_head():
    report = account(INSTRUCTBLIP_VIDEO)
    # OPT with tie_word_embeddings false: lm_head 800 × 32 (word_embed_proj_dim), beside the table
    assert report.components.lm_head == 800 * 32
    # the Q-Former cross-attends in layers 0 and 3 of 4 (cross_attention_frequency 3)
    self_attention = 4 * linear(24, 24) + 2 * 24
    cross_attention = 2 * linear(24, 24) + 2 * linear(32, 24) + 2 * 24
    ffn = linear(24, 40) + linear(40, 24) + 2 * 24
    layers = 4 * (self_attention + 2 * ffn) + 2 * cross_attention
    assert report.components.projector == 4 * 24 + (90 * 24 + 16 * 24 + 2 * 24) + layers + linear(24, 48)


def test_a_text_token_runs_the_language_model_only():
    per_token = flops(BLIP2, 1).per_token
    # OPT's two layers: 2 · (4 · 64²) in the attention's projections, 2 · (2 · 64 · 96) in the FFN; the tied head
    # 2 · 64 · 1,000; nothing of the tower or the Q-Former
    assert (per_token.attention_projections, per_token.ffn) == (2 * 2 * 4 * 64 * 64, 2 * 2 * 2 * 64 * 96)
    assert per_token.lm_head == 2 * 64 * 1000


def test_blip2s_image_flops_are_refused_by_name():
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(BLIP2, image="640x480")


def test_another_blip2_class_is_counted_as_blip2_for_conditional_generation_and_said():
    model = load_config(BLIP2)
    retrieval = model.config.model_copy(update={"architectures": ["Blip2ForImageTextRetrieval"]})
    assert retrieval.model_class() == "Blip2ForConditionalGeneration"
    assert retrieval.notes()[0] == (
        "Blip2ForImageTextRetrieval is not a BLIP-2 class ffncalc knows; counted as Blip2ForConditionalGeneration."
    )
