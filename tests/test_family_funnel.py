"""Funnel Transformer: an encoder in blocks, each block after the first over the sequence pooled to half its length
(its first layer's queries over the pooled sequence, its keys and values over the block's input), a decoder whose layers
run again over the full length, and relative-shift attention: every query scored against its keys, R relative positions
projected by r_kernel, and the two token types.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__funnel.json: 131,003,706, FunnelForMaskedLM;
synthetic__funnel.json: 220,176), and a forward pass of synthetic__funnel (13 tokens) to FlopCounterMode by
tests/test_flops.py (tools/flop_count.py on the meta device). Here the parts are derived by hand from the configs'
numbers, and the forward at more lengths and pooling switches is derived by hand, the pooled lengths and relative
positions from modeling_funnel.py's own rules (ported below), and held to FlopCounterMode's figures.

Not held: an input of one token (or one pooled to a single position on both sides of a layer): torch runs the einsum of
a 1 × 1 score as a multiplication, which FlopCounterMode does not count (474,400 for synthetic__funnel at one token,
7 layers × 2 · 4 · 12 less than ffncalc's 475,072); and an input that separate_cls with truncate_seq pools down to two
positions before the last block, which transformers 5.24 cannot run (positional_attn *= cls_mask fails to broadcast).
"""

import json

import pytest

from ffncalc import account, flops, memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__funnel.json")


def load(path):
    with open(path) as file:
        return json.load(file)


def test_default_masked_lm_by_hand(write_config):
    # FunnelConfig(): vocabulary 30,522, d_model 768, 12 heads of 64, d_inner 3,072, block_sizes [4, 4, 4] and 2
    # decoder layers (14 FunnelLayers), tied. Embeddings: the word table and a LayerNorm. A layer: q_head (unbiased),
    # k_head, v_head, post_proj (biased); r_w_bias, r_r_bias, r_s_bias [12, 64]; r_kernel [768, 12, 64]; seg_embed
    # [2, 12, 64]; attention.layer_norm; ffn.linear_1, linear_2 (biased), ffn.layer_norm. lm_head: its bias (its weight
    # the word table).
    v, d, hd, i = 30522, 768, 12 * 64, 3072
    attention = d * hd + 2 * (d * hd + hd) + hd * d + d + 3 * hd + d * hd + 2 * hd + 2 * d
    ffn = d * i + i + i * d + d + 2 * d
    report = account(str(write_config({"model_type": "funnel"})))
    assert report.model_class == "FunnelForMaskedLM"
    assert report.total_params == v * d + 2 * d + 14 * (attention + ffn) + v == 131_003_706


# synthetic__funnel: vocabulary 320, d_model 64, 4 heads of 12 (48 ≠ 64), d_inner 96, block_sizes [2, 1, 2], 2 decoder
# layers, tied; separate_cls, truncate_seq, pool_q_only.
V, D, HEADS, HEAD_DIM, I = 320, 64, 4, 12, 96
HD = HEADS * HEAD_DIM
LAYER = D * HD + 2 * (D * HD + HD) + HD * D + D + 3 * HD + D * HD + 2 * HD + 2 * D + D * I + I + I * D + D + 2 * D
EMBEDDINGS = V * D + 2 * D


@pytest.mark.parametrize(
    "architecture, extra, layers, heads",
    [
        ("FunnelForMaskedLM", {}, 7, V),  # lm_head's bias
        ("FunnelForMaskedLM", {"tie_word_embeddings": False}, 7, V * D + V),
        ("FunnelModel", {}, 7, 0),
        # FunnelBaseModel: the embeddings and the encoder's 5 layers, no decoder
        ("FunnelBaseModel", {}, 5, 0),
        # the discriminator: dense (D → D) and dense_prediction (D → 1), biased
        ("FunnelForPreTraining", {}, 7, D * D + D + D + 1),
        # FunnelBaseModel and FunnelClassificationHead: linear_hidden (D → D), linear_out (D → labels)
        ("FunnelForSequenceClassification", {"num_labels": 3}, 5, D * D + D + 3 * D + 3),
        ("FunnelForMultipleChoice", {}, 5, D * D + D + D + 1),
        # FunnelModel and one linear to num_labels (2 unless said)
        ("FunnelForTokenClassification", {"num_labels": 3}, 7, 3 * D + 3),
        ("FunnelForQuestionAnswering", {}, 7, 2 * D + 2),
    ],
)
def test_classes_by_hand(write_config, architecture, extra, layers, heads):
    report = account(str(write_config({**load(SYNTHETIC), "architectures": [architecture], **extra})))
    assert report.model_class == architecture
    assert report.total_params == EMBEDDINGS + layers * LAYER + heads


# --- the forward, by hand --------------------------------------------------------------------------------------------


def pooled_length(length, separate_cls=True, truncate_seq=True):
    """FunnelAttentionStructure.pool_tensor: with separate_cls the first position is prepended again (after dropping
    the last with truncate_seq), then avg_pool2d with stride 2 and ceil_mode; FunnelEncoder pools only a sequence
    longer than 2 positions (1 without separate_cls)."""
    if length <= (2 if separate_cls else 1):
        return length
    if separate_cls:
        length = 1 + (length - 1 if truncate_seq else length)
    return -(-length // 2)


def stride_pool_pos(pos, block_index, separate_cls=True, truncate_seq=True):
    """FunnelAttentionStructure.stride_pool_pos, on lists."""
    if separate_cls:
        return [-(2**block_index) + 1] + (pos[1:-1] if truncate_seq else pos[1:])[::2]
    return pos[::2]


def relative_rows(pos, stride, pooled_pos=None, shift=1):
    """len(FunnelAttentionStructure.relative_pos(...)): the relative positions gathered from the sinusoid table."""
    pooled_pos = pos if pooled_pos is None else pooled_pos
    max_dist = pooled_pos[0] - pos[0] + shift * len(pooled_pos) * stride
    min_dist = pooled_pos[0] - pos[-1]
    return len(range(max_dist, min_dist - 1, -stride))


def layer_flops(queries, keys, rows):
    """One FunnelLayer over QUERIES queries and KEYS keys with ROWS relative positions, by component: q_head and
    post_proj over the queries, k_head and v_head over the keys, r_kernel over the rows (einsum td,dnh->tnh); the
    content scores and the values (2 · queries · keys · heads · head_dim each), the positional scores (binh,tnh->bnit:
    queries × rows), the token-type scores (bind,snd->bnis: queries × 2); the FFN over the queries."""
    projections = 2 * queries * D * HD + 2 * 2 * keys * D * HD + 2 * queries * HD * D + 2 * rows * D * HD
    scores = 2 * 2 * queries * keys * HD + 2 * queries * rows * HD + 2 * queries * 2 * HD
    return projections, scores, 2 * 2 * queries * D * I


def forward_by_hand(tokens, blocks=(2, 1, 2), decoder=2, separate_cls=True, truncate_seq=True, pool_q_only=True):
    """FunnelForMaskedLM's forward of TOKENS, as modeling_funnel.py runs it: (projections, scores, ffn, head, the
    queries each layer ran over)."""
    totals, lengths = [0, 0, 0], []
    hidden, pos = tokens, list(range(tokens))
    for block_index, size in enumerate(blocks):
        # the position lists of get_position_embeds: pooled for every block but the first
        unpooled_pos = pos
        if block_index:
            pos = stride_pool_pos(pos, block_index, separate_cls, truncate_seq)
        pooling = block_index > 0 and hidden > (2 if separate_cls else 1)
        for layer_index in range(size):
            if pooling and layer_index == 0:
                queries = pooled_length(hidden, separate_cls, truncate_seq)
                keys = hidden if pool_q_only else queries
                if queries != keys:  # shift 2: the pooled queries against the unpooled positions
                    rows = relative_rows(unpooled_pos, 2 ** (block_index - 1), pos, shift=2)
                else:
                    rows = relative_rows(pos, 2**block_index)
                hidden = queries
            else:
                queries = keys = hidden
                rows = relative_rows(pos, 2**block_index)
            lengths.append(queries)
            for k, value in enumerate(layer_flops(queries, keys, rows)):
                totals[k] += value
    for _ in range(decoder):  # the decoder: block 0's positions over the full length
        for k, value in enumerate(layer_flops(tokens, tokens, relative_rows(list(range(tokens)), 1))):
            totals[k] += value
    return (*totals, 2 * tokens * D * V, lengths)


# FlopCounterMode's figures: tools/flop_count.py's count (meta device, eval, transformers 5.24) of synthetic__funnel with
# the switches given; its attention group is the projections (r_kernel's too) and the scores, mlp the FFN.
@pytest.mark.parametrize(
    "tokens, switches, lengths, counted",
    [
        # 16 → 8 → 4: the block's first layer reads 16 (then 8) keys
        (16, {}, [16, 16, 8, 4, 4], {"total": 6_341_632, "attention": 3_720_192, "mlp": 1_966_080}),
        # 13 → ⌈13 / 2⌉ = 7 → 4 (tests/expected/flop_counter.json's synthetic__funnel)
        (13, {}, [13, 13, 7, 4, 4], {"total": 5_207_776, "attention": 3_028_704, "mlp": 1_646_592}),
        (7, {}, [7, 7, 4, 2, 2], {"total": 2_725_504, "attention": 1_554_048, "mlp": 884_736}),
        (33, {}, [33, 33, 17, 9, 9], {"total": 14_226_816, "attention": 8_770_944, "mlp": 4_104_192}),
        # truncate_seq false: the last position kept, 16 + 1 pooled: ⌈17 / 2⌉ = 9, then ⌈10 / 2⌉ = 5
        (
            16,
            {"truncate_seq": False},
            [16, 16, 9, 5, 5],
            {"total": 6_537_184, "attention": 3_842_016, "mlp": 2_039_808},
        ),
        (
            13,
            {"truncate_seq": False},
            [13, 13, 7, 4, 4],
            {"total": 5_207_776, "attention": 3_028_704, "mlp": 1_646_592},
        ),
        # separate_cls false: ⌈13 / 2⌉ = 7, ⌈7 / 2⌉ = 4
        (
            13,
            {"separate_cls": False},
            [13, 13, 7, 4, 4],
            {"total": 5_207_776, "attention": 3_028_704, "mlp": 1_646_592},
        ),
        # pool_q_only false: the block's first layer pools its keys and values too (and reads block 1's positions)
        (
            13,
            {"pool_q_only": False},
            [13, 13, 7, 4, 4],
            {"total": 4_952_512, "attention": 2_773_440, "mlp": 1_646_592},
        ),
        (
            16,
            {"pool_q_only": False},
            [16, 16, 8, 4, 4],
            {"total": 6_016_000, "attention": 3_394_560, "mlp": 1_966_080},
        ),
    ],
)
def test_forward_runs_each_block_over_its_pooled_length(write_config, tokens, switches, lengths, counted):
    projections, scores, ffn, head, queries = forward_by_hand(tokens, **switches)
    assert queries == lengths
    assert projections + scores == counted["attention"] and ffn == counted["mlp"]
    assert projections + scores + ffn + head == counted["total"]
    config = write_config({**load(SYNTHETIC), **switches}) if switches else SYNTHETIC
    report = flops(str(config), tokens, causal=False).prefill
    assert report.attention_projections == projections
    assert report.attention_scores == scores
    assert report.ffn == ffn
    assert report.lm_head == head
    assert report.total == counted["total"]


def test_relative_rows_by_hand_at_16_tokens():
    # The rows each layer gathers at 16 tokens: block 0 (and the decoder) 2 · 16; block 1's first layer 2 · 8 pooled
    # queries + 16 unpooled positions; block 2's first 2 · 4 + 8, its second 2 · 4.
    pos0 = list(range(16))
    pos1 = stride_pool_pos(pos0, 1)
    pos2 = stride_pool_pos(pos1, 2)
    assert (len(pos1), len(pos2)) == (8, 4)
    assert relative_rows(pos0, 1) == 32
    assert relative_rows(pos0, 1, pos1, shift=2) == 32
    assert relative_rows(pos1, 2, pos2, shift=2) == 16
    assert relative_rows(pos2, 4) == 8


def test_per_token_is_one_position_through_every_layer_reading_its_layer_keys():
    # Per token at context 16: each of the 7 layers' weights once (q, k, v, post_proj, the FFN) and the head; each
    # query's scores against the keys its layer has (16, 16, 16, 8, 4 in the encoder, 16, 16 in the decoder), its R
    # relative positions (32, 32, 32, 16, 8; 32, 32) and the 2 token types; r_kernel's projection runs once a layer
    # a sequence, not per token.
    keys = [16, 16, 16, 8, 4, 16, 16]
    rows = [32, 32, 32, 16, 8, 32, 32]
    per_token = flops(SYNTHETIC, 16, causal=False).per_token
    assert per_token.attention_projections == 7 * 2 * (4 * D * HD)
    assert per_token.ffn == 7 * 2 * 2 * D * I
    assert per_token.attention_scores == sum(2 * 2 * HD * k + 2 * HD * r + 2 * 2 * HD for k, r in zip(keys, rows))
    assert per_token.lm_head == 2 * D * V


def test_memory_caches_each_layer_keys_over_its_own_length():
    # BF16 keys and values, heads · (12 + 12) = 96 elements a position: at context 16 the layers' keys run over 16
    # positions (block 0's two layers, block 1's, which reads the unpooled input, the decoder's two), 8 (block 2's first
    # layer, reading block 1's output) and 4 (block 2's second).
    cache = memory(SYNTHETIC, 16, kv_dtype="bf16").kv_cache
    assert cache.bytes == (5 * 16 + 8 + 4) * 96 * 2


def test_factorized_attention_is_refused_in_one_line(write_config):
    with pytest.raises(InvalidConfigError, match="attention_type 'factorized'"):
        account(str(write_config({**load(SYNTHETIC), "attention_type": "factorized"})))


def test_repeated_blocks_are_refused(write_config):
    with pytest.raises(InvalidConfigError, match="block_repeats"):
        account(str(write_config({**load(SYNTHETIC), "block_repeats": [1, 2, 1]})))
