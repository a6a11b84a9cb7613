"""The long tail: classic decoders, more MoE families, hybrids, encoders and encoder-decoders.

Totals of every bundled config are checked in test_bundled_totals.py; here are the figures
particular to these families, each derived by hand or taken from a published count.
"""

import json
from fractions import Fraction

import pytest

from ffncalc import account, crossover, flops
from ffncalc.errors import InvalidConfigError

from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"


# --- published counts of hand-written configs ------------------------------------------------


@pytest.mark.parametrize(
    "name, published",
    [
        # tests/reference/ground_truth.json, "Official total params" of the Pythia suite
        ("EleutherAI__pythia-70m", 70_426_624),
        ("EleutherAI__pythia-160m", 162_322_944),
        ("EleutherAI__pythia-410m", 405_334_016),
        ("EleutherAI__pythia-1b", 1_011_781_632),
    ],
)
def test_pythia_from_its_published_hyperparameters(name, published):
    assert account(str(CONFIGS / f"{name}.json")).total_params == published


def test_pythia_70m_by_hand():
    # embed_in and embed_out 50,304 × 512 each; a layer: 2 LayerNorms (2 · 1,024), qkv 512 → 1,536 and dense
    # 512 → 512 with biases, FFN 512 → 2,048 → 512 with biases; a final LayerNorm (1,024).
    layer = 2 * 1024 + (512 * 1536 + 1536) + (512 * 512 + 512) + (512 * 2048 + 2048) + (2048 * 512 + 512)
    assert 2 * 50304 * 512 + 6 * layer + 1024 == 70_426_624


# --- classic decoders ---------------------------------------------------------------------------


def test_gpt_j_model_card_counts_mesh_transformer_jax_shards():
    # The card's n_parameters 6,053,381,344 exceeds the HF modules (6,050,882,784, transformers) because
    # mesh-transformer-jax keeps, on each of its 8 shards, its own copy of replicated tensors: every layer's
    # two LayerNorm vectors (2 · 4,096) and fc_out bias (4,096), the final LayerNorm, and an embedding bias.
    copies = 7 * 28 * (2 * 4096 + 4096) + 7 * 2 * 4096 + 8 * 4096
    report = account("EleutherAI/gpt-j-6b")
    assert copies == 2_498_560
    assert report.total_params + copies == 6_053_381_344
    assert any(f"{copies:,} more than the modules hold" in note for note in report.notes)


def test_gpt_j_head_has_a_bias_and_layers_run_in_parallel():
    report = account("EleutherAI/gpt-j-6b")
    assert report.components.lm_head == 4096 * 50400 + 50400
    assert report.layers[0].parts["norm.ln_1"] == 2 * 4096  # one LayerNorm for both branches


def test_opt_positions_carry_two_offset_rows():
    # embed_positions has max_position_embeddings + 2 rows (fairseq's padding offset).
    report = account("facebook/opt-125m")
    assert report.outside_layers["embedding.position_embeddings"] == (2048 + 2) * 768
    assert report.components.lm_head == 0  # tied


def test_bloom_embedding_layernorm_is_counted_as_a_norm():
    report = account("bigscience/bloom-560m")
    assert report.outside_layers["norm.transformer.word_embeddings_layernorm"] == 2 * 1024
    # 256,901,120 embedding parameters, as the model card says
    assert report.components.embedding == 250880 * 1024 == 256_901_120


def test_falcon_7b_is_multi_query_with_one_layernorm_per_parallel_layer():
    (group,) = account("tiiuae/falcon-7b-instruct").layers
    assert group.attention_kind == "mqa"
    assert group.parts["attention.k"] == 4544 * 64  # one KV head of 4544 / 71 = 64
    assert group.components.norm == 2 * 4544


# --- MoE ---------------------------------------------------------------------------------------


def test_dbrx_matches_its_readme_rounded():
    # databricks/dbrx README: 132B total parameters, 36B active on any input.
    report = account("databricks/dbrx")
    assert round(report.total_params / 1e9) == 132
    assert round(report.active_params / 1e9) == 36


def test_ling_flash_by_hand_matches_its_bf16_checkpoint():
    # HF API: BF16 102,889,697,280 (+ F32 7,936 expert biases). 32 layers, hidden 4096, vocab 157,184, untied;
    # attention: fused qkv 4096 → (32 + 2 · 4) · 128 and dense 4096², q/k norms of 128; 2 RMSNorms a layer;
    # layer 0 dense (3 · 4096 · 9216); 31 MoE layers of 256 experts + 1 shared (3 · 4096 · 1024 each) and a router.
    attention = 4096 * 5120 + 4096 * 4096 + 2 * 128
    moe = 257 * 3 * 4096 * 1024 + 256 * 4096
    by_hand = 2 * 157184 * 4096 + 32 * (attention + 2 * 4096) + 3 * 4096 * 9216 + 31 * moe + 4096
    report = account("inclusionAI/Ling-flash-2.0")
    assert by_hand == report.total_params == 102_889_697_280
    assert {extra.name: extra.elements for extra in report.checkpoint_extras}["router expert bias"] == 7_936


def test_ernie_router_correction_bias_is_a_parameter_there():
    # transformers' Ernie4_5_MoeStatics holds e_score_correction_bias as an nn.Parameter: it counts (router).
    report = account("baidu/ERNIE-4.5-21B-A3B-Thinking")
    moe_layer = next(group for group in report.layers if group.ffn_kind == "moe")
    assert moe_layer.parts["ffn.router"] == 2560 * 64 + 64


def test_mimo_multi_token_prediction_layer_by_hand():
    # A Qwen2 layer (q/k/v biased), 3 RMSNorms and input_proj 2H → H, for num_nextn_predict_layers = 1.
    hidden, kv = 4096, 8 * 128
    layer = (hidden * hidden + hidden) + 2 * (hidden * kv + kv) + hidden * hidden + 3 * hidden * 11008 + 2 * hidden
    extras = {extra.name: extra.elements for extra in account("XiaomiMiMo/MiMo-7B-Base").checkpoint_extras}
    assert extras["multi-token-prediction layers"] == layer + 3 * hidden + 2 * hidden * hidden


def test_llama4_scout_active_parameters_are_17b():
    # "17B-16E": 17B parameters active per token (1 routed + 1 shared expert), 16 experts.
    assert round(account("meta-llama/Llama-4-Scout-17B-16E-Instruct").active_params / 1e9) == 17


# --- hybrids -----------------------------------------------------------------------------------


def test_nemotron_h_mamba_layer_by_hand():
    # in_proj 8192 → z (16,384) + x·B·C (16,384 + 2 · 8 · 256) + dt (256); conv over 20,480 channels × 4 with bias;
    # dt_bias, A_log, D per head (256 each); gated RMSNorm 16,384; out_proj 16,384 → 8192; the block's RMSNorm.
    conv_dim = 16384 + 2 * 8 * 256
    mamba = 8192 * (16384 + conv_dim + 256) + conv_dim * 4 + conv_dim + 3 * 256 + 16384 + 16384 * 8192 + 8192
    groups = {group.attention_kind: group for group in account("nvidia/Nemotron-H-56B-Base-8K").layers}
    assert groups["mamba2"].params == mamba
    assert len(groups["mamba2"].indices) == 54 and len(groups["gqa"].indices) == 10


def test_nemotron_h_crossover_counts_only_its_attention_layers():
    # 10 attention layers of 64 heads × (128 + 128): 2 · 64 · 256 per key each; 54 MLP layers 2 · 2 · 8192 · 32768.
    ffn = 54 * 2 * 2 * 8192 * 32768
    per_key = 10 * 2 * 64 * 256
    report = crossover("nvidia/Nemotron-H-56B-Base-8K")
    assert report.ffn == ffn
    assert Fraction(report.crossover_context).limit_denominator(10) == Fraction(ffn, per_key)


def test_qwen3_next_crossover_counts_only_its_full_attention_layers():
    # 12 of 48 layers are full attention (every 4th): 2 · 16 heads · (256 + 256) per key each.
    # FFN per token, every layer: router 2048 · 512 + 10 experts and 1 shared of 3 · 2048 · 512, gate 2048.
    ffn = 48 * 2 * (2048 * 512 + 11 * 3 * 2048 * 512 + 2048)
    report = crossover("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert report.ffn == ffn
    assert report.crossover_context == ffn // (12 * 2 * 16 * 512) == 17_409


def test_qwen3_next_linear_attention_costs_the_same_at_every_context():
    short, long = flops("Qwen/Qwen3-Next-80B-A3B-Instruct", 1024), flops("Qwen/Qwen3-Next-80B-A3B-Instruct", 65536)
    assert short.per_token.mixer == long.per_token.mixer > 0
    assert long.per_token.attention_scores == 64 * short.per_token.attention_scores


# --- encoders and encoder-decoders -----------------------------------------------------------------


def test_bert_for_pretraining_counts_and_shows_all_three_heads(write_config):
    # bert-base-uncased's checkpoint stores F32 110,106,428: encoder + pooler (768² + 768) + masked-LM
    # transform (768² + 768, LayerNorm 1,536, decoder bias 30,522; decoder weight tied) + next-sentence (768 · 2 + 2).
    config = json.loads((BUNDLED / "google-bert__bert-base-uncased.json").read_text())
    report = account(str(write_config({**config, "architectures": ["BertForPreTraining"]})))
    outside = report.outside_layers
    assert outside["other.bert.pooler.dense"] == 768 * 768 + 768
    assert outside["lm_head.cls.predictions.transform.dense"] == 768 * 768 + 768
    assert outside["norm.cls.predictions.transform.LayerNorm"] == 2 * 768
    assert outside["lm_head.lm_head"] == 30522
    assert outside["other.cls.seq_relationship"] == 768 * 2 + 2
    assert outside["embedding.bert.embeddings.token_type_embeddings"] == 2 * 768
    assert report.total_params == 110_106_428
    assert report.model_class == "BertForPreTraining"


def test_bert_for_masked_lm_has_no_pooler_and_no_next_sentence_head():
    # bert-base-uncased's config names BertForMaskedLM: transformers builds neither head.
    report = account("google-bert/bert-base-uncased")
    assert report.model_class == "BertForMaskedLM"
    assert not any("pooler" in name or "seq_relationship" in name for name in report.outside_layers)
    assert report.total_params == 110_106_428 - (768 * 768 + 768) - (768 * 2 + 2)


def test_bert_model_has_the_pooler_and_no_heads(write_config):
    config = json.loads((BUNDLED / "google-bert__bert-base-uncased.json").read_text())
    report = account(str(write_config({**config, "architectures": ["BertModel"]})))
    assert report.outside_layers["other.pooler.dense"] == 768 * 768 + 768
    assert report.components.lm_head == 0


def test_t5_decoder_layers_have_cross_attention_as_their_own_component():
    report = account("google-t5/t5-small")
    # 6 decoder layers × (q, k, v, o of 512 × 8 · 64)
    assert report.components.cross_attention == 6 * 4 * 512 * 512
    stacks = {(group.stack, tuple(group.indices)) for group in report.layers}
    assert stacks == {("encoder", (0,)), ("encoder", (1, 2, 3, 4, 5)), ("decoder", (0,)), ("decoder", (1, 2, 3, 4, 5))}


def test_t5_generates_with_its_decoder_only():
    # per generated token at context n: 6 decoder layers of self-attention (4 · 512²), cross-attention q and o
    # (2 · 512²; k and v are projected once from the encoder output), FFN (2 · 512 · 2048), the tied head
    # (512 · 32,128); scores: self and cross, each 2 · 8 · (64 + 64) per key.
    n = 1000
    per_token = flops("google-t5/t5-small", n).per_token
    assert per_token.attention_projections == 2 * 6 * 6 * 512 * 512
    assert per_token.ffn == 2 * 6 * 2 * 512 * 2048
    assert per_token.lm_head == 2 * 512 * 32128
    assert per_token.attention_scores == 6 * 2 * (2 * 8 * 128) * n


def test_flan_t5_feed_forward_is_gated():
    (row,) = [group for group in account("google/flan-t5-small").layers if group.stack == "encoder"][:1]
    assert row.activation == "GeGLU"
    assert row.parts["ffn.gate"] == row.parts["ffn.up"] == 512 * 1024


def test_an_encoder_prefill_is_bidirectional_whatever_is_asked():
    report = flops("google-bert/bert-base-uncased", 512, causal=True)
    assert not report.causal
    # 12 layers × 2 · 12 heads · (64 + 64) per key, every one of 512 tokens over 512 keys
    assert report.prefill.attention_scores == 12 * 2 * 12 * 128 * 512 * 512


def test_t5_small_prefill_runs_the_encoder_over_the_input_and_projects_cross_keys_once():
    # t5-small: d_model 512, 8 heads × d_kv 64, d_ff 2048 (ReLU: wi, wo), 6 + 6 layers, tied head of 32,128.
    # A prompt of n = 512 tokens, non-causal; 2 FLOPs per multiply-add; scores 2 · 8 · (64 + 64) per key.
    n, per_key = 512, 2 * 8 * (64 + 64)
    encoder = 6 * n * 2 * (4 * 512 * 512 + 2 * 512 * 2048) + 6 * n * n * per_key
    cross_keys_and_values = 6 * n * 2 * (2 * 512 * 512)
    decoder_per_token = 6 * 2 * (4 * 512 * 512 + 2 * 512 * 512 + 2 * 512 * 2048) + 2 * 32128 * 512
    decoder = n * decoder_per_token + 6 * n * n * per_key + 6 * n * n * per_key  # self and cross scores
    report = flops("google-t5/t5-small", n, causal=False)
    assert report.prefill.total == encoder + cross_keys_and_values + decoder
    assert report.training == 3 * report.prefill.total
    assert report.per_token.total == decoder_per_token + 6 * n * per_key * 2
    assert any("with the encoder's output cached" in convention for convention in report.conventions)


@pytest.mark.parametrize("projection", ["frobnicate", "gated-", "gated-frobnicate", "dense-gelu", "gated-gelu-x"])
def test_t5_refuses_a_feed_forward_proj_transformers_cannot_build(write_config, projection):
    # T5Config refuses a prefix other than "gated" and more than two parts; building the model then looks the
    # activation up in ACT2FN, which has no "frobnicate" and no "" (transformers 5.24)
    config = json.loads((BUNDLED / "google-t5__t5-small.json").read_text())
    with pytest.raises(InvalidConfigError, match="feed_forward_proj"):
        account(str(write_config({**config, "feed_forward_proj": projection})))
