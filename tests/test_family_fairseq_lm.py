"""XGLM and BioGPT: fairseq's pre-LN decoders with biases everywhere, a final LayerNorm and a tied head.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__xglm.json, defaults__biogpt.json, synthetic__xglm*.json, synthetic__biogpt*.json)
and FlopCounterMode counts the same FLOPs for synthetic__xglm and synthetic__biogpt (tests/test_flops.py).
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

XGLM = str(ROOT / "tests" / "configs" / "synthetic__xglm.json")
XGLM_CROSS = str(ROOT / "tests" / "configs" / "synthetic__xglm_cross_attention_untied.json")
BIOGPT = str(ROOT / "tests" / "configs" / "synthetic__biogpt.json")


def fairseq_layer(d, ffn):
    """q, k, v, out_proj with biases; fc1 and fc2 with biases; two LayerNorms with biases."""
    return 4 * (d * d + d) + (2 * d * ffn + ffn + d) + 2 * 2 * d


def test_xglm_default_model_is_xglm_564m(write_config):
    # XGLMConfig() is facebook/xglm-564M: d 1,024, 24 layers, FFN 4,096, vocabulary 256,008, tied; its sinusoidal
    # positions are a buffer, not a parameter; a final LayerNorm.
    total = 24 * fairseq_layer(1024, 4096) + 256008 * 1024 + 2 * 1024
    assert total == 564_463_616
    assert account(str(write_config({"model_type": "xglm"}))).total_params == total


def test_xglm_holds_no_position_table():
    assert not any("embed_positions" in name for name in checkpoint_tensors(load_config(XGLM).spec))


def test_xglm_add_cross_attention_adds_a_biased_attention_and_its_norm_per_layer():
    # d 48, 2 layers, FFN 80, vocabulary 900, untied: each layer gains encoder_attn (4 · (48² + 48)) and
    # encoder_attn_layer_norm (2 · 48)
    layer = fairseq_layer(48, 80) + 4 * (48 * 48 + 48) + 2 * 48
    assert account(XGLM_CROSS).total_params == 2 * layer + 2 * 900 * 48 + 2 * 48 == 140_320
    tensors = checkpoint_tensors(load_config(XGLM_CROSS).spec)
    assert tensors["model.layers.1.encoder_attn.out_proj.bias"] == (48,)
    assert tensors["model.layers.1.encoder_attn_layer_norm.weight"] == (48,)


def test_xglm_cache_holds_self_and_cross_attention_keys_and_values():
    cache = memory(XGLM_CROSS, 20, dtype="bf16").kv_cache
    assert cache.bytes == 2 * 2 * (2 * 48 * 20) * 2  # self and cross, 2 layers, k and v of 48, 20 positions, BF16


def test_xglm_token_flops_by_hand():
    # 3 layers, d 64, FFN 96, 4 heads of 16; tied head 1,000 × 64; scores 2 · 2 · 64 per key over 16 keys
    per_token = flops(XGLM, 16).per_token
    assert per_token.attention_projections == 3 * 2 * 4 * 64 * 64
    assert per_token.ffn == 3 * 2 * 2 * 64 * 96
    assert per_token.lm_head == 2 * 1000 * 64
    assert per_token.attention_scores == 3 * 4 * 64 * 16


def test_biogpt_default_model_is_biogpt_347m(write_config):
    # BioGptConfig() is microsoft/biogpt (347M in Luo et al., 2022): d 1,024, 24 layers, FFN 4,096, vocabulary
    # 42,384, tied; learned positions of 1,024 + 2 rows (fairseq's offset); a final LayerNorm.
    total = 24 * fairseq_layer(1024, 4096) + 42384 * 1024 + (1024 + 2) * 1024 + 2 * 1024
    assert total == 346_763_264
    assert account(str(write_config({"model_type": "biogpt"}))).total_params == total


def test_biogpt_positions_have_two_rows_more_and_its_head_is_output_projection(write_config):
    config = {"model_type": "biogpt", "architectures": ["BioGptForCausalLM"], "tie_word_embeddings": False}
    tensors = checkpoint_tensors(load_config(str(write_config(config))).spec)
    assert tensors["biogpt.embed_positions.weight"] == (1026, 1024)
    assert tensors["output_projection.weight"] == (42384, 1024)
    assert "output_projection.bias" not in tensors


def test_biogpt_pad_token_must_be_a_row_of_the_table(write_config):
    with pytest.raises(InvalidConfigError, match="pad_token_id"):
        account(str(write_config({"model_type": "biogpt", "vocab_size": 100, "pad_token_id": 100})))


def test_xglm_heads_must_divide_d_model(write_config):
    with pytest.raises(InvalidConfigError, match="not a multiple of attention_heads"):
        account(str(write_config({"model_type": "xglm", "d_model": 100, "attention_heads": 3})))
