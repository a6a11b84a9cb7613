"""BigBird: BERT's embeddings, post-LN layers and heads under bert.* (the pooler in every class but the span
classifier), its self-attention block-sparse by default: blocks of block_size queries reading their neighbouring
blocks, the first and last (global) blocks and num_random_blocks random blocks, over the input padded to whole blocks,
and full attention for an input too short for them.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__big_bird.json: 128,111,286,
BigBirdForMaskedLM; synthetic__big_bird.json: 96,384), and a forward pass of synthetic__big_bird (40 tokens,
block-sparse) to FlopCounterMode by tests/test_flops.py (tools/flop_count.py on the meta device). Here the parts are
derived by hand from the configs' numbers, and the forward at more lengths, one attended fully and one padded to whole
blocks, is held to FlopCounterMode's figures.
"""

import pytest

from ffncalc import account, flops, memory

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__big_bird.json")


def test_default_masked_lm_by_hand(write_config):
    # BigBirdConfig(): vocabulary 50,358, hidden 768, 12 layers of 12 heads, MLP 3,072, 4,096 positions, two token
    # types, tied, use_bias. Embeddings: word, position and token-type tables and a LayerNorm. A layer: query, key,
    # value and output dense, all biased; the MLP, biased; two LayerNorms. BigBirdForMaskedLM builds BigBirdModel with
    # its pooler (dense, biased); cls.predictions: transform.dense, transform.LayerNorm, the decoder's bias (its weight
    # is the word table).
    v, h, i = 50358, 768, 3072
    embeddings = v * h + 4096 * h + 2 * h + 2 * h
    layer = 4 * (h * h + h) + h * i + i + i * h + h + 4 * h
    pooler = h * h + h
    head = h * h + h + 2 * h + v
    report = account(str(write_config({"model_type": "big_bird"})))
    assert report.model_class == "BigBirdForMaskedLM"
    assert report.total_params == embeddings + 12 * layer + pooler + head == 128_111_286


# synthetic__big_bird: vocabulary 320, hidden 64, 4 heads of 16, MLP 96, 2 layers, 128 positions, two token types,
# tied; block_size 4, num_random_blocks 1.
V, H, I, HEADS, D = 320, 64, 96, 4, 16
EMBEDDINGS = V * H + 128 * H + 2 * H + 2 * H
LAYER = 4 * (H * H + H) + H * I + I + I * H + H + 4 * H


@pytest.mark.parametrize(
    "architecture, extra, heads",
    [
        # the span classifier: no pooler; qa_classifier's intermediate (H → I), output (I → H, a LayerNorm) and
        # qa_outputs to 2 (BigBirdForQuestionAnswering sets num_labels to 2)
        ("BigBirdForQuestionAnswering", {}, H * I + I + I * H + H + 2 * H + H * 2 + 2),
        # the sequence classifier: the pooler, then RoBERTa's head (classifier.dense H → H, classifier.out_proj H → 3)
        ("BigBirdForSequenceClassification", {"num_labels": 3}, 2 * (H * H + H) + H * 3 + 3),
        # the pre-training heads: the pooler, the masked LM's and the next-sentence head (H → 2)
        ("BigBirdForPreTraining", {}, (H * H + H) + (H * H + H + 2 * H + V) + H * 2 + 2),
    ],
)
def test_heads_by_hand(write_config, architecture, extra, heads):
    config = write_config({**load(SYNTHETIC), "architectures": [architecture], **extra})
    report = account(str(config))
    assert report.model_class == architecture
    assert report.total_params == EMBEDDINGS + 2 * LAYER + heads


def test_use_bias_false_drops_query_key_and_value_biases(write_config):
    # use_bias False: query, key and value without biases; attention.output.dense keeps its own
    config = write_config({**load(SYNTHETIC), "use_bias": False})
    assert account(str(config)).total_params == account(SYNTHETIC).total_params - 2 * 3 * H


def load(path):
    import json

    with open(path) as file:
        return json.load(file)


def block_sparse_scores(positions, block=4, random=1, heads=HEADS, head_dim=D):
    """One layer's scores over POSITIONS (P, a multiple of BLOCK) by hand, from modeling_big_bird.py's
    bigbird_block_sparse_attention, per head (each product 2 · head_dim FLOPs a query and key, for QKᵀ and again for
    the values):

    q[0] · all keys (first_product, first_context_layer): b · P pairs; q[1] · k[0], k[1], k[2], k[-1] and the r random
    blocks of gathered_key[:, :, 0] (second_product, second_context_layer): b · (4 + r)b; the P/b − 4 middle blocks
    q[2:-2] · their three sliding blocks (inner_band_product, the values by exp_blocked_value_matrix), their r random
    blocks (rand_band_product), k[0] and k[-1] (first_band_product, last_band_product; einsum): (P/b − 4) · b · (5 + r)b;
    q[-2] as q[1] and q[-1] as q[0]. The masks are spread by products that contract nothing (einsum blq,blk->blqk), which
    torch runs as multiplications: FlopCounterMode finds no matmul there. In eval _bigbird_block_rand_mask_with_head
    returns zeros (the first block gathered r times), in training r blocks drawn at random: the same shapes."""
    b, r = block, random
    pairs = b * positions + b * (4 + r) * b + (positions // b - 4) * b * (5 + r) * b + b * (4 + r) * b + b * positions
    return heads * 2 * (head_dim + head_dim) * pairs


def full_scores(positions, heads=HEADS, head_dim=D):
    """One layer's scores attended fully (original_full): every query against all P keys."""
    return heads * 2 * (head_dim + head_dim) * positions * positions


# Per position: query, key, value and output 2 · 4 · 64² = 32,768 a layer; the MLP 2 · 2 · 64 · 96 = 24,576 a layer.
# Per token: cls.predictions.transform.dense 2 · 64² = 8,192 (other), the decoder 2 · 64 · 320 = 40,960. The pooler,
# 2 · 64² = 8,192 once a sequence (BigBirdModel's, on the first token), is in FlopCounterMode's total, not in ffncalc's
# (as LUKE's: tests/test_flops.py). FlopCounterMode's figures: tools/flop_count.py (meta device, eval, transformers
# 5.24), its attention group being the projections and the scores.
@pytest.mark.parametrize(
    "tokens, positions, scores, counted",
    [
        # N = 16 ≤ (5 + 2 · 1) · 4 = 28: BigBirdModel switches to original_full, unpadded
        (16, 16, full_scores(16), {"total": 2_760_704, "attention": 1_179_648, "mlp": 786_432, "lm_head": 655_360}),
        # N = 28, the longest attended fully
        (28, 28, full_scores(28), {"total": 4_997_120, "attention": 2_236_416, "mlp": 1_376_256, "lm_head": 1_146_880}),
        # N = 29: block-sparse, padded to 32 (8 blocks); the layers run over 32 positions, the head over 29 tokens
        (
            29,
            32,
            block_sparse_scores(32),
            {"total": 5_513_216, "attention": 2_506_752, "mlp": 1_572_864, "lm_head": 1_187_840},
        ),
        # N = 37, padded to 40 (10 blocks)
        (
            37,
            40,
            block_sparse_scores(40),
            {"total": 6_955_008, "attention": 3_162_112, "mlp": 1_966_080, "lm_head": 1_515_520},
        ),
        # N = 40 (a multiple of 4): tests/expected/flop_counter.json's synthetic__big_bird
        (
            40,
            40,
            block_sparse_scores(40),
            {"total": 7_102_464, "attention": 3_162_112, "mlp": 1_966_080, "lm_head": 1_638_400},
        ),
    ],
)
def test_forward_is_full_when_short_and_block_sparse_over_whole_blocks_beyond(tokens, positions, scores, counted):
    projections = positions * 2 * 32_768
    mlp = positions * 2 * 24_576
    head, dense, pooler = tokens * 40_960, tokens * 8_192, 8_192
    assert projections + 2 * scores == counted["attention"]
    assert mlp == counted["mlp"] and head == counted["lm_head"]
    assert projections + 2 * scores + mlp + head + dense + pooler == counted["total"]
    report = flops(SYNTHETIC, tokens, causal=False).prefill
    assert report.attention_scores == 2 * scores
    assert report.attention_projections == projections
    assert report.ffn == mlp
    assert report.lm_head == head
    assert report.other == dense
    assert report.total + pooler == counted["total"]


def test_block_sparse_pairs_by_hand():
    # 40 positions, blocks of 4, one random block: q[0] and q[-1] 4 · 40 pairs each, q[1] and q[-2] 4 · 5 · 4 each, the
    # six middle blocks 4 · 6 · 4 each: 160 · 2 + 80 · 2 + 96 · 6 = 1,056 pairs a head, against 1,600 attended fully
    assert block_sparse_scores(40) == 4 * 2 * 32 * 1_056
    assert full_scores(40) == 4 * 2 * 32 * 1_600


def test_original_full_attends_to_every_key_unpadded(write_config):
    # attention_type original_full: no blocks, no padding; 37 tokens, each against all 37
    config = write_config({**load(SYNTHETIC), "attention_type": "original_full"})
    report = flops(str(config), 37, causal=False).prefill
    assert report.attention_scores == 2 * full_scores(37)
    assert report.ffn == 37 * 2 * 24_576


def test_per_token_reads_what_a_middle_block_reads():
    # a middle block's query: its own block and its two neighbours, the two global blocks and one random block,
    # (5 + 1) · 4 = 24 keys; each key 2 layers · 2 · 4 heads · (16 + 16) = 512 FLOPs
    assert flops(SYNTHETIC, 40, causal=False).per_token.attention_scores == 24 * 512
    assert flops(SYNTHETIC, 20, causal=False).per_token.attention_scores == 20 * 512
    conventions = " ".join(flops(SYNTHETIC, 40, causal=False).conventions)
    assert "block-sparse attention (BigBird)" in conventions and "in training as in eval" in conventions


def test_cross_attention_makes_it_full(write_config):
    # add_cross_attention (with is_decoder): BigBirdModel switches to original_full, so 40 tokens read all 40 keys,
    # and as many encoder positions through crossattention (ffncalc's encoder as long as the input)
    config = write_config({**load(SYNTHETIC), "is_decoder": True, "add_cross_attention": True})
    report = flops(str(config), 40, causal=False).prefill
    assert report.attention_scores == 2 * (full_scores(40) + full_scores(40))


def test_memory_caches_every_key():
    # block-sparse layers keep all n keys and values: 2 layers · 2 · 64 elements a token, as the config's dtype stores
    report = memory(SYNTHETIC, 40)
    per_token = report.kv_cache.bytes_per_token
    assert per_token % (2 * 2 * 64) == 0 and report.kv_cache.bytes == 40 * per_token
    assert [layer.kind for layer in report.kv_cache.layers] == ["block-sparse attention (blocks of 4)"]
