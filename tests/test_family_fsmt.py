"""FSMT (fairseq's WMT19 translation models): BART's post-LN stacks with a source and a target table.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__fsmt.json")


def test_fsmt_defaults_by_hand(write_config):
    # FSMTConfig(): source and target tables of 42,024 × 1,024 and the decoder's output_projection, untied; sinusoidal
    # positions of 1,024 + pad 1 + 1 rows per stack (frozen parameters); 12 encoder layers (self-attention with biases,
    # fc1, fc2 of 4,096, two LayerNorms) and 12 decoder layers (cross-attention too, three LayerNorms).
    vocab, d, ffn = 42024, 1024, 4096
    encoder = 4 * (d * d + d) + 2 * d * ffn + ffn + d + 2 * 2 * d
    decoder = 8 * (d * d + d) + 2 * d * ffn + ffn + d + 3 * 2 * d
    total = 3 * vocab * d + 2 * 1026 * d + 12 * encoder + 12 * decoder
    assert total == 483_913_728
    assert account(str(write_config({"model_type": "fsmt"}))).total_params == total


def test_fsmt_head_is_the_decoders_output_projection_over_the_target_vocabulary():
    # decoder.output_projection: 64 → tgt_vocab_size 1,000, no bias; the source table (900) is the encoder's
    assert flops(SYNTHETIC, 1).per_token.lm_head == 2 * 64 * 1000
    assert account(SYNTHETIC).components.lm_head == 64 * 1000


def test_fsmt_cache_holds_self_and_cross_attention_keys_and_values():
    # 3 decoder layers × 2 (k, v) × 64 per position, at 2 bytes: 48 of the decoder's own and 48 of the encoder's
    cache = memory(SYNTHETIC, 48, dtype="bf16").kv_cache
    assert [(row.kind, row.bytes) for row in cache.layers] == [
        ("attention", 3 * 2 * 64 * 2 * 48),
        ("cross-attention (encoder output)", 3 * 2 * 64 * 2 * 48),
    ]


def test_fsmt_tied_tables_of_different_sizes_are_refused_naming_the_field(write_config):
    config = {"model_type": "fsmt", "src_vocab_size": 900, "tgt_vocab_size": 1000, "tie_word_embeddings": True}
    with pytest.raises(InvalidConfigError, match="tie_word_embeddings: the source table"):
        account(str(write_config(config)))
