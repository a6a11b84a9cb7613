"""BigBird-Pegasus: Pegasus's pre-LN stacks under model.* (learned positions, a LayerNorm at the end of each stack stored
as layernorm_embedding, attention biased with use_bias), whose encoder's self-attention is BigBird's block-sparse
attention: blocks of block_size queries reading their neighbouring blocks, the first and last (global) blocks and
num_random_blocks random blocks, over the input padded to whole blocks, and full attention for an input too short for
them; the padding is dropped before the decoder's cross-attention.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__bigbird_pegasus.json: 576,891,904,
BigBirdPegasusForConditionalGeneration; synthetic__bigbird_pegasus.json: 182,368). The forward of
synthetic__bigbird_pegasus is held here, group by group, to FlopCounterMode (tools/flop_count.py on the meta device,
the seq2seq LM; its decoder's cross-attention, encoder_attn, a group of its own, which ffncalc counts in the attention):
40 tokens as tests/expected/flop_counter.json records them, 16 and 28 (attended fully), 29 and 37 (padded to 32 and 40;
--cpu counts the same). The other classes' totals below are derived by hand; transformers 5.24 on the meta device
counts the same.
"""

import json

import pytest

from ffncalc import account, flops, memory

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__bigbird_pegasus.json")


def load(path):
    with open(path) as file:
        return json.load(file)


def test_default_seq2seq_lm_by_hand(write_config):
    # BigBirdPegasusConfig(): vocabulary 96,103, d_model 1,024, 16 encoder and 16 decoder layers of 16 heads, MLPs
    # 4,096, 4,096 learned positions a stack (no offset), use_bias false, tied. shared; each stack's embed_positions and
    # its layernorm_embedding (run after the last layer). An encoder layer: self_attn.self's query, key, value and
    # self_attn.output (no biases), fc1 and fc2 (biased), two LayerNorms; a decoder layer: self- and cross-attention
    # (q, k, v, out_proj, no biases), fc1, fc2, three LayerNorms. The head is shared; final_logits_bias is a buffer.
    v, d, f = 96103, 1024, 4096
    mlp = d * f + f + f * d + d
    encoder = 4 * d * d + mlp + 2 * 2 * d
    decoder = 8 * d * d + mlp + 3 * 2 * d
    report = account(str(write_config({"model_type": "bigbird_pegasus"})))
    assert report.model_class == "BigBirdPegasusForConditionalGeneration"
    assert report.total_params == v * d + 2 * 4096 * d + 16 * encoder + 16 * decoder + 2 * 2 * d == 576_891_904
    assert report.components.attention == 16 * 4 * d * d + 16 * 4 * d * d
    assert report.components.cross_attention == 16 * 4 * d * d


# synthetic__bigbird_pegasus: d_model 64; encoder 2 layers of 4 heads (16 wide), MLP 96; decoder 2 layers of 2 heads
# (32 wide), MLP 80; vocabulary 320, 128 positions a stack, tied, use_bias false; block_size 4, num_random_blocks 1.
V, D = 320, 64
MLP_E, MLP_D = D * 96 + 96 + 96 * D + D, D * 80 + 80 + 80 * D + D
ENCODER_LAYER = 4 * D * D + MLP_E + 2 * 2 * D
DECODER_LAYER = 8 * D * D + MLP_D + 3 * 2 * D
BASE = V * D + 2 * 128 * D + 2 * ENCODER_LAYER + 2 * DECODER_LAYER + 2 * 2 * D


@pytest.mark.parametrize(
    "architecture, extra, total",
    [
        ("BigBirdPegasusModel", {}, BASE),
        ("BigBirdPegasusForConditionalGeneration", {}, BASE),
        # classification_head: dense (D → D) and out_proj (D → 2: the config sets no num_labels, PreTrainedConfig's 2)
        ("BigBirdPegasusForSequenceClassification", {}, BASE + D * D + D + D * 2 + 2),
        ("BigBirdPegasusForSequenceClassification", {"num_labels": 3}, BASE + D * D + D + D * 3 + 3),
        # qa_outputs, D → 2
        ("BigBirdPegasusForQuestionAnswering", {}, BASE + D * 2 + 2),
        # the decoder alone (its token table, positions, layers and final norm) and its own lm_head: the class declares
        # no tied weights, so tie_word_embeddings true ties nothing
        ("BigBirdPegasusForCausalLM", {}, V * D + 128 * D + 2 * DECODER_LAYER + 2 * D + V * D),
        (
            "BigBirdPegasusForCausalLM",
            {"tie_word_embeddings": False},
            V * D + 128 * D + 2 * DECODER_LAYER + 2 * D + V * D,
        ),
        # use_bias: q, k, v and the output biased in every attention, 4 · D an encoder layer and 8 · D a decoder layer
        ("BigBirdPegasusForConditionalGeneration", {"use_bias": True}, BASE + 2 * 4 * D + 2 * 8 * D),
        # untied: shared, each stack's embed_tokens and the head, four tables
        ("BigBirdPegasusForConditionalGeneration", {"tie_word_embeddings": False}, BASE + 3 * V * D),
        ("BigBirdPegasusModel", {"tie_word_embeddings": False}, BASE + 2 * V * D),
    ],
)
def test_classes_by_hand(write_config, architecture, extra, total):
    report = account(str(write_config({**load(SYNTHETIC), "architectures": [architecture], **extra})))
    assert report.model_class == architecture
    assert report.total_params == total


def test_the_final_norms_are_stored_as_layernorm_embedding():
    # each stack's LayerNorm after its last layer is layernorm_embedding (the names transformers saves are held by
    # tests/test_transformers_agreement.py); the decoder's is the final norm
    outside = account(SYNTHETIC).outside_layers
    assert outside["norm.model.encoder.layernorm_embedding"] == 2 * D
    assert outside["norm.final_norm"] == 2 * D
    assert BASE == 182_368


def block_sparse_scores(positions, block=4, random=1, heads=4, head_dim=16):
    """One encoder layer's scores over POSITIONS (P, a multiple of BLOCK) by hand, from modeling_bigbird_pegasus.py's
    BigBirdPegasusBlockSparseAttention (BigBird's, copied), per head (each product 2 · head_dim FLOPs a query and key,
    for QKᵀ and again for the values):

    q[0] · all keys: b · P pairs; q[1] · k[0], k[1], k[2], k[-1] and the r random blocks: b · (4 + r)b; the P/b − 4
    middle blocks q[2:-2] · their three sliding blocks, their r random blocks, k[0] and k[-1]: (P/b − 4) · b · (5 + r)b;
    q[-2] as q[1] and q[-1] as q[0]. The masks are spread by products that contract nothing (einsum blq,blk->blqk),
    which torch runs as multiplications: FlopCounterMode finds no matmul there. In eval no random block is drawn (the
    first block gathered r times), in training r are: the same shapes."""
    b, r = block, random
    pairs = b * positions + b * (4 + r) * b + (positions // b - 4) * b * (5 + r) * b + b * (4 + r) * b + b * positions
    return heads * 2 * (head_dim + head_dim) * pairs


def full_scores(positions, heads=4, head_dim=16):
    """One encoder layer's scores attended fully (original_full): every query against all P keys."""
    return heads * 2 * (head_dim + head_dim) * positions * positions


def decoder_scores(tokens, keys):
    """One decoder attention's scores (self: KEYS = N; cross: the encoder's N positions): 2 heads of 32, QKᵀ and the
    values, 2 · 32 · N · keys each a head (eager: all N × N self-attention scores, masked after)."""
    return 2 * 2 * (2 * 32 * tokens * keys)


# N input tokens and N target tokens. BigBirdPegasusEncoder attends fully up to (5 + 2 · 1) · 4 = 28 tokens, unpadded;
# beyond, it pads the input to P, a multiple of 4, runs its layers over P positions and drops the padding after its
# final norm: the decoder's cross-attention projects keys and values of N positions and scores N × N. Per position:
# q, k, v and the output 2 · 4 · 64² = 32,768 (encoder and decoder self-attention alike); the encoder's MLP
# 2 · 2 · 64 · 96 = 24,576, the decoder's 2 · 2 · 64 · 80 = 20,480; cross-attention's q and out_proj 2 · 2 · 64² =
# 16,384 a decoder token, its k and v 16,384 an encoder position. The head 2 · 64 · 320 = 40,960 a token.
@pytest.mark.parametrize(
    "tokens, positions, encoder_scores, counted",
    [
        # FlopCounterMode, tools/flop_count.py (meta), transformers 5.24; 40: tests/expected/flop_counter.json
        # N = 16 ≤ 28: original_full, unpadded
        (
            16,
            16,
            full_scores(16),
            {"total": 5_636_096, "attention": 2_359_296, "cross_attention": 1_179_648, "mlp": 1_441_792},
        ),
        # N = 28, the longest attended fully
        (
            28,
            28,
            full_scores(28),
            {"total": 10_379_264, "attention": 4_472_832, "cross_attention": 2_236_416, "mlp": 2_523_136},
        ),
        # N = 29: block-sparse, padded to 32 (8 blocks); the same with --cpu
        (
            29,
            32,
            block_sparse_scores(32),
            {"total": 11_117_568, "attention": 4_837_888, "cross_attention": 2_331_136, "mlp": 2_760_704},
        ),
        # N = 37, padded to 40 (10 blocks); the same with --cpu
        (
            37,
            40,
            block_sparse_scores(40),
            {"total": 14_410_752, "attention": 6_287_872, "cross_attention": 3_125_760, "mlp": 3_481_600},
        ),
        # N = 40, a multiple of 4
        (
            40,
            40,
            block_sparse_scores(40),
            {"total": 15_286_272, "attention": 6_602_752, "cross_attention": 3_440_640, "mlp": 3_604_480},
        ),
    ],
)
def test_forward_by_hand_and_as_flop_counter_mode_counts_it(tokens, positions, encoder_scores, counted):
    n, p = tokens, positions
    encoder_attention = 2 * (p * 32_768 + encoder_scores)
    decoder_attention = 2 * (n * 32_768 + decoder_scores(n, n))
    cross = 2 * (n * 16_384 + n * 16_384 + decoder_scores(n, n))  # q and out_proj; k and v of N positions; scores
    mlp = 2 * p * 24_576 + 2 * n * 20_480
    head = n * 40_960
    assert encoder_attention + decoder_attention == counted["attention"]
    assert cross == counted["cross_attention"] and mlp == counted["mlp"]
    assert encoder_attention + decoder_attention + cross + mlp + head == counted["total"]
    report = flops(SYNTHETIC, n, causal=False).prefill
    assert report.attention_projections == 2 * p * 32_768 + 2 * n * 32_768 + 2 * 2 * n * 16_384
    assert report.attention_scores == 2 * encoder_scores + 2 * decoder_scores(n, n) + 2 * decoder_scores(n, n)
    assert report.ffn == mlp and report.lm_head == head and report.other == 0
    assert report.total == counted["total"]


def test_the_recorded_forward_is_the_one_held_here():
    recorded = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__bigbird_pegasus"]
    assert (recorded["tokens"], recorded["total"], recorded["cross_attention"]) == (40, 15_286_272, 3_440_640)


def test_block_sparse_pairs_by_hand():
    # 40 positions, blocks of 4, one random block: q[0] and q[-1] 4 · 40 pairs each, q[1] and q[-2] 4 · 5 · 4 each, the
    # six middle blocks 4 · 6 · 4 each: 160 · 2 + 80 · 2 + 96 · 6 = 1,056 pairs a head, against 1,600 attended fully
    assert block_sparse_scores(40) == 4 * 2 * 32 * 1_056
    assert full_scores(40) == 4 * 2 * 32 * 1_600


def test_original_full_attends_to_every_key_unpadded(write_config):
    # attention_type original_full: no blocks, no padding; 37 tokens, each against all 37. FlopCounterMode
    # (tools/flop_count.py, meta, transformers 5.24) counts 14,226,944 in all, 6,251,520 in the self-attention groups
    config = write_config({**load(SYNTHETIC), "attention_type": "original_full"})
    n = 37
    encoder_attention = 2 * (n * 32_768 + full_scores(n))
    decoder_attention = 2 * (n * 32_768 + decoder_scores(n, n))
    assert encoder_attention + decoder_attention == 6_251_520
    report = flops(str(config), n, causal=False).prefill
    assert report.attention_scores == 2 * full_scores(n) + 4 * decoder_scores(n, n)
    assert report.ffn == 2 * n * 24_576 + 2 * n * 20_480
    assert report.total == 14_226_944


def test_generation_runs_the_decoder_alone():
    # per generated token only the decoder runs: its self-attention reads the context, its cross-attention the N
    # encoder positions (unpadded), whatever the encoder's blocks; 2 layers · 2 · 2 heads · (32 + 32) a key each
    report = flops(SYNTHETIC, 40, causal=False).per_token
    assert report.attention_scores == 40 * 2 * 256 + 40 * 2 * 256
    assert report.ffn == 2 * 20_480


def test_memory_caches_the_decoder_alone():
    # the decoder's self-attention and cross-attention keys and values: the encoder's block-sparse layers cache none
    kinds = {layer.kind for layer in memory(SYNTHETIC, 40).kv_cache.layers}
    assert not any("block-sparse" in kind for kind in kinds)
