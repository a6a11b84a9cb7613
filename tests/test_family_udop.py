"""UDOP (UdopForConditionalGeneration): T5's encoder and decoder stacks; the encoder reads the input's tokens and, after
them, every patch of the page image.

Totals, components and saved tensors are held to transformers 5.24 on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__udop.json: 742,440,960, microsoft/udop-large's
config; synthetic__udop.json: 360,144). The FLOPs are held to FlopCounterMode on transformers' own forward of the
synthetic config (tools/flop_count.py --cpu: input_ids, bbox, pixel_values and decoder_input_ids) at two prompt
lengths. Convention: one page image of the config's image_size square, every token's box inside the page, as many
target tokens as input tokens. Each figure is also derived here by hand from the configs' numbers.
"""

import json

import pytest

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import EXPECTED, ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__udop.json")
COUNTED = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]["synthetic__udop"]
# FlopCounterMode on the same forward at 24 tokens: /tmp/side/bin/python tools/flop_count.py --cpu 24
# tests/configs/synthetic__udop.json (transformers 5.24, torch 2.13), which prints (not merged: one entry a config)
COUNTED_24 = {
    "tokens": 24,
    "total": 18_284_544,
    "attention": 6_242_304,
    "cross_attention": 3_883_008,
    "mlp": 5_603_328,
    "lm_head": 983_040,
    "patch_embedding": 1_572_864,
}

# synthetic__udop: d_model 64, 4 heads of 16, gated-gelu MLP of 96, 2 encoder and 3 decoder blocks, 320 tokens, a 64 px
# page in patches of 16 (16 patches) of 3 channels, 128 cells a side, relative_bias_args 1d (tied), horizontal (16
# buckets) and vertical (32 buckets and the prefix's 2)
H, HEADS, D_KV, FFN, ENCODER, DECODER, VOCAB, PATCHES = 64, 4, 16, 96, 2, 3, 320, 16


@pytest.fixture
def default(write_config):
    return str(write_config({"model_type": "udop"}))


def test_default_by_hand(default):
    # UdopConfig() (microsoft/udop-large): d_model 1,024, 16 heads of 64, relu MLP of 4,096, 24 + 24 blocks, 33,201
    # tokens, 224 px page in patches of 16 of 3 channels, 1,024 cells, three relative bias tables of 32 × 16.
    h, ffn = 1024, 4096
    shared = 33201 * h  # tied into both stacks and the head
    patches = 2 * (h * 3 * 16 * 16 + h)  # patch_embed.proj (tied to the encoder's embed_patches) and the decoder's own
    encoder = 24 * (4 * h * h + 2 * h * ffn + 2 * h) + 32 * 16  # block 0's relative_attention_bias
    decoder = 24 * (8 * h * h + 2 * h * ffn + 3 * h) + 32 * 16
    cells = 2 * 1024 * h  # x and y tables
    biases = 2 * 2 * 32 * 16  # each stack's horizontal and vertical tables (its 1d one is block 0's)
    report = account(default)
    assert report.total_params == shared + patches + encoder + decoder + 2 * h + cells + biases == 742_440_960
    assert report.components.other == patches + biases == 1_576_960


def test_synthetic_by_hand():
    shared = VOCAB * H
    patches = 2 * (H * 3 * 16 * 16 + H)
    encoder = ENCODER * (4 * H * H + 3 * H * FFN + 2 * H) + 32 * HEADS
    decoder = DECODER * (8 * H * H + 3 * H * FFN + 3 * H) + 32 * HEADS
    cells = 2 * 128 * H
    biases = 2 * (16 * HEADS + (32 + 2) * HEADS)  # the prefix's two rows in the vertical table
    report = account(SYNTHETIC)
    assert report.total_params == shared + patches + encoder + decoder + 2 * H + cells + biases == 360_144


def test_the_tensors_are_named_as_transformers_saves_them():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["patch_embed.proj.weight"] == (H, 3, 16, 16)
    assert tensors["decoder.embed_patches.proj.bias"] == (H,)
    assert tensors["encoder.cell_2d_embedding.y_position_embeddings.weight"] == (128, H)
    assert tensors["encoder.relative_bias.biases.2.relative_attention_bias.weight"] == (34, HEADS)
    assert tensors["decoder.relative_bias.biases.1.relative_attention_bias.weight"] == (16, HEADS)
    assert tensors["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] == (32, HEADS)
    assert "encoder.relative_bias.biases.0.relative_attention_bias.weight" not in tensors  # tied to block 0's
    assert "lm_head.weight" not in tensors  # tied to shared


def forward(n: int) -> dict[str, int]:
    """One forward at n input and n target tokens, by hand: the encoder over n + 16 positions, each cross-attention
    reading them all; 2 FLOPs a multiply-add, scores 2 · heads · (16 + 16) a query and key."""
    positions = n + PATCHES
    per_key = 2 * HEADS * (D_KV + D_KV)
    projections = 2 * 4 * H * H  # q, k, v, o
    encoder = ENCODER * (positions * projections + positions * positions * per_key)
    decoder = DECODER * (n * projections + n * n * per_key)
    cross = DECODER * (n * 2 * 2 * H * H + positions * 2 * 2 * H * H + n * positions * per_key)
    mlp = (ENCODER * positions + DECODER * n) * 2 * 3 * H * FFN
    return {
        "attention": encoder + decoder,
        "cross_attention": cross,
        "mlp": mlp,
        "lm_head": n * 2 * VOCAB * H,
        "patch_embedding": PATCHES * 2 * H * 3 * 16 * 16,
    }


@pytest.mark.parametrize("counted", [COUNTED, COUNTED_24], ids=["16 tokens", "24 tokens"])
def test_the_forward_equals_flop_counter_mode(counted):
    n = counted["tokens"]
    by_hand = forward(n)
    assert {name: counted[name] for name in by_hand} == by_hand
    assert sum(by_hand.values()) == counted["total"]
    report = flops(SYNTHETIC, n, causal=False).prefill
    assert report.ffn == counted["mlp"]
    assert report.lm_head == counted["lm_head"]
    assert report.other == counted["patch_embedding"]  # the page's convolution, once for each of its 16 patches
    assert report.attention_projections + report.attention_scores == counted["attention"] + counted["cross_attention"]
    assert report.total == counted["total"]


def test_the_default_encoder_reads_196_patches_after_the_prompt(default):
    # a 224 px page in patches of 16: 14² = 196 patches. Prefill of 512 tokens: the encoder's 24 blocks over 708
    # positions, each attending to all 708, 2 · 16 · (64 + 64) a query and key; the patch convolution once a patch
    report = flops(default, 512, causal=False)
    per_key = 2 * 16 * 128
    decoder_scores = 24 * 512 * (512 + 708) * per_key
    assert report.prefill.attention_scores == 24 * 708 * 708 * per_key + decoder_scores
    assert report.prefill.other == 196 * 2 * 1024 * 3 * 16 * 16
    assert any("n + 196 positions" in convention for convention in report.conventions)


def test_a_generated_token_cross_attends_to_the_prompt_and_the_page():
    # per token at context n: self-attention over n keys and cross-attention over n + 16 positions, 3 blocks
    for n in (16, 1024):
        report = flops(SYNTHETIC, n)
        assert report.per_token.attention_scores == DECODER * 2 * HEADS * 32 * (n + n + PATCHES)


def test_the_cache_holds_the_encoder_output_of_the_prompt_and_the_page():
    # BF16: each decoder block caches its own keys and values (4 heads · (16 + 16) a token) and the cross-attention's
    # over n + 16 positions; one more token grows both by one position
    cache = memory(SYNTHETIC, context=100).kv_cache
    per_position = DECODER * HEADS * (D_KV + D_KV) * 2
    assert cache.bytes == per_position * 100 + per_position * (100 + PATCHES)
    assert cache.bytes_per_token == 2 * per_position


def test_a_bias_table_with_other_heads_is_refused(write_config):
    # create_relative_bias refuses a table whose num_heads is not the model's
    path = write_config({"model_type": "udop", "relative_bias_args": [{"type": "1d", "num_heads": 8}]})
    with pytest.raises(InvalidConfigError, match=r"relative_bias_args\[0\]\.num_heads"):
        account(str(path))


def test_the_default_bias_tables_are_said_as_a_config_writes_them(default, ffncalc):
    # relative_bias_args left None: transformers' __post_init__ gives the three tables, shown as a config writes them
    [taken] = [used for used in account(default).defaults_used if used.field == "relative_bias_args"]
    assert taken.value == [{"type": "1d"}, {"type": "horizontal"}, {"type": "vertical"}]
    assert 'relative_bias_args = [{"type": "1d"}' in ffncalc("memory", default).stdout
