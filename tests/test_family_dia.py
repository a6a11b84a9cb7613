"""Dia: an encoder-decoder of Llama-style layers, a byte-level text encoder and a decoder over channels of audio codes.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

DIA = str(ROOT / "tests" / "configs" / "synthetic__dia.json")


def self_attention(hidden: int, heads: int, kv_heads: int, head_dim: int) -> int:
    """q hidden → heads · head_dim, k and v hidden → kv heads · head_dim, o back; no biases."""
    return 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim


def mlp(hidden: int, inner: int) -> int:
    """gate_up_proj hidden → 2 · inner, down_proj inner → hidden; no biases."""
    return 3 * hidden * inner


def test_dia_defaults_by_hand(write_config):
    # DiaConfig(): encoder 12 layers of 1,024 (16 heads of 128, FFN 4,096), a 256-row byte table; decoder 18 layers
    # of 2,048 (16 heads of 128 over 4 KV heads, FFN 8,192), cross-attention 16 heads of 128 reading 1,024, a table
    # of 9 · 1,028 rows, logits_dense 2,048 → 9 · 1,028; RMSNorms without biases.
    encoder = 12 * (self_attention(1024, 16, 16, 128) + mlp(1024, 4096) + 2 * 1024) + 1024 + 256 * 1024
    cross = 2048 * 2048 + 2 * 1024 * 2048 + 2048 * 2048
    decoder = 18 * (self_attention(2048, 16, 4, 128) + cross + mlp(2048, 8192) + 3 * 2048) + 2048 + 9252 * 2048
    head = 2048 * 9252
    assert encoder + decoder + head == 1_611_160_576  # transformers 5.24 builds DiaForConditionalGeneration()
    report = account(str(write_config({"model_type": "dia"})))
    assert (report.total_params, report.components.cross_attention, report.components.lm_head) == (
        encoder + decoder + head,
        18 * cross,
        head,
    )


def test_dia_cross_attention_reads_the_encoders_width():
    # decoder 48 wide, cross-attention 3 heads of 14 over keys and values 32 wide (the encoder's)
    tensors = checkpoint_tensors(load_config(DIA).spec)
    assert tensors["model.decoder.layers.2.cross_attention.q_proj.weight"] == (3 * 14, 48)
    assert tensors["model.decoder.layers.2.cross_attention.k_proj.weight"] == (3 * 14, 32)
    assert tensors["model.decoder.layers.2.cross_attention.o_proj.weight"] == (48, 3 * 14)
    assert tensors["model.encoder.layers.1.mlp.gate_up_proj.weight"] == (2 * 48, 32)


def test_dia_table_and_head_hold_every_channel():
    # 3 channels of 40 codes: a table of 120 rows, logits_dense 48 → 120
    tensors = checkpoint_tensors(load_config(DIA).spec)
    assert tensors["model.decoder.embeddings.embed.weight"] == (120, 48)
    assert tensors["logits_dense.weight"] == (120, 48)


def test_dia_model_has_no_head(write_config):
    report = account(str(write_config({"model_type": "dia", "architectures": ["DiaModel"]})))
    assert report.components.lm_head == 0
    assert report.total_params == 1_611_160_576 - 2048 * 9252


def test_dia_refuses_a_delay_pattern_of_another_length(write_config):
    with pytest.raises(InvalidConfigError, match="delay_pattern"):
        account(str(write_config({"model_type": "dia", "delay_pattern": [0, 1]})))
