"""Pop2Piano: T5's stacks over a spectrogram, a table of composer embeddings before the encoder, a head of its own.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SYNTHETIC = str(CONFIGS / "synthetic__pop2piano.json")


def test_pop2piano_defaults_by_hand(write_config):
    # Pop2PianoConfig(): vocabulary 2,400, 21 composers, d 512, 8 heads of 64, gated FFN 2,048 (wi_0, wi_1, wo), 6 + 6
    # blocks, a 32 × 8 bias table in each stack's first block; RMS norms of d (2 a block in the encoder, 3 in the
    # decoder, 2 final); shared, the composer table and lm_head, each its own.
    d, inner, ffn = 512, 512, 2048
    encoder = 4 * d * inner + 3 * d * ffn + 2 * d
    decoder = 8 * d * inner + 3 * d * ffn + 3 * d
    tables = 2400 * d + 21 * d + 2400 * d
    total = tables + 6 * encoder + 6 * decoder + 2 * 32 * 8 + 2 * d
    assert total == 59_108_352  # transformers 5.24 builds Pop2PianoForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "pop2piano"}))).total_params == total


def test_pop2piano_feed_forward_runs_dense_act_fn_not_the_suffix_of_feed_forward_proj():
    # feed_forward_proj "gated-gelu" only says gated; Pop2PianoDenseGatedActDense applies dense_act_fn (gelu_new here)
    ffn = load_config(SYNTHETIC).spec.layers[0].ffn
    assert (ffn.gated, ffn.activation) == (True, "gelu_new")


def test_pop2piano_head_is_its_own_even_with_tie_word_embeddings():
    # tie_word_embeddings is left at true (the default): lm_head 300 × 64 and the composer table 7 × 64 are stored
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["lm_head.weight"] == (300, 64)
    assert tensors["mel_conditioner.embedding.weight"] == (7, 64)
    assert "encoder.embed_tokens.weight" not in tensors  # tied to shared


def test_pop2piano_relu_ffn_has_one_input_projection():
    # feed_forward_proj "relu": wi → wo, 48 → 80 → 48
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__pop2piano_relu.json")).spec)
    assert tensors["encoder.block.0.layer.1.DenseReluDense.wi.weight"] == (80, 48)
    assert "encoder.block.0.layer.1.DenseReluDense.wi_0.weight" not in tensors


def test_pop2piano_token_runs_the_decoder_and_its_head():
    # 2 decoder blocks, d 64, 4 heads of 24 (96 wide): self q, k, v, o and cross q, o (the cross keys and values are
    # projected once per encoder position); gated FFN 3 · 64 · 96; the head 300 × 64; scores 2 · 4 · (24 + 24) per
    # key, self and cross, over 16 keys each
    per_token = flops(SYNTHETIC, 16).per_token
    assert per_token.attention_projections == 2 * 2 * 6 * 64 * 96
    assert per_token.ffn == 2 * 2 * 3 * 64 * 96
    assert per_token.lm_head == 2 * 300 * 64
    assert per_token.attention_scores == 2 * 2 * 384 * 16


def test_pop2piano_cache_holds_self_and_cross_attention_keys_and_values():
    cache = memory(SYNTHETIC, 40, dtype="bf16").kv_cache
    assert cache.bytes == 2 * 2 * (2 * 96 * 40) * 2  # self and cross, 2 blocks, k and v of 96, 40 positions, BF16
