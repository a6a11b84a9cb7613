"""Gemma 4: global layers with wider heads (and keys that are also the values), a MoE block beside the dense
MLP, per-layer embeddings, and layers that reuse an earlier layer's keys and values.

Every expected figure is derived by hand from the config's numbers.
"""

import json
from pathlib import Path

import pytest

from ffncalc import account, flops, load_config
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import BUNDLED, ROOT

GEMMA4_26B = str(BUNDLED / "google__gemma-4-26B-A4B-it.json")
TEXT = str(ROOT / "tests" / "configs" / "synthetic__gemma4_text.json")

# Gemma-4-26B-A4B: hidden 2,816, 30 layers, 16 query heads; sliding layers 8 KV heads of 256, every sixth layer
# global with heads of 512 (global_head_dim) and 2 KV heads (num_global_key_value_heads, attention_k_eq_v).
H = 2816
SLIDING_ATTENTION = H * 16 * 256 + 2 * H * 8 * 256 + 16 * 256 * H  # q, k, v, o
GLOBAL_ATTENTION = H * 16 * 512 + H * 2 * 512 + 16 * 512 * H  # q, k, o: no v_proj, v is k's projection
EXPERT = 3 * H * 704  # gate and up (stacked in gate_up_proj) and down


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_gemma4_26b_global_layers_have_wider_heads_and_no_v_proj():
    report = account(GEMMA4_26B)
    assert group(report, 0).components.attention == SLIDING_ATTENTION == 34_603_008
    assert group(report, 5).components.attention == GLOBAL_ATTENTION == 49_020_928
    assert report.components.attention == 25 * SLIDING_ATTENTION + 5 * GLOBAL_ATTENTION == 1_110_179_840


def test_gemma4_26b_moe_block_runs_beside_the_dense_mlp():
    # Each layer: the dense MLP (3 · H · 2,112, every token: a shared expert), a router (proj H → 128, a scale per
    # hidden unit and one per expert) and 128 experts of 704, 8 of them per token.
    dense, router = 3 * H * 2112, H * 128 + H + 128
    report = account(GEMMA4_26B)
    assert report.components.ffn == 30 * (dense + router + 128 * EXPERT) == 23_384_152_320
    assert report.moe.routed_expert_params == 30 * 128 * EXPERT
    assert report.active_params == report.language_model_params - 30 * (128 - 8) * EXPERT == 3_822_530_560


def test_gemma4_26b_language_model_by_hand():
    # Tied embedding 262,144 × H; per layer, four sandwich norms, the MoE block's three norms and q/k norms of the
    # layer's head width; the final norm.
    dense, router = 3 * H * 2112, H * 128 + H + 128
    ffn = dense + router + 128 * EXPERT + 7 * H
    sliding, glob = SLIDING_ATTENTION + 2 * 256 + ffn, GLOBAL_ATTENTION + 2 * 512 + ffn
    total = 262144 * H + 25 * sliding + 5 * glob + H
    assert account(GEMMA4_26B).language_model_params == total == 25_233_141_760


def test_gemma4_26b_kv_cache_keeps_keys_and_values_though_v_is_k():
    # Global layers cache k and v (v is normed apart, without rotary): 2 heads · (512 + 512) per token; sliding
    # layers 8 · (256 + 256) for at most 1,024 tokens. BF16.
    cache = memory(GEMMA4_26B, "32k").kv_cache
    assert cache.bytes == (5 * 32768 * 2 * 1024 + 25 * 1024 * 8 * 512) * 2 == 880_803_840


def test_last_layer_is_always_global_and_bidirectional_windows_shrink():
    # layer_types ends with a sliding layer: transformers makes it global. use_bidirectional_attention "all" makes
    # the window sliding_window // 2 + 1 = 32 // 2 + 1 = 17.
    loaded = load_config(TEXT)
    windows = [layer.attention.window for layer in loaded.spec.layers]
    assert windows == [17, 17, None, 17, 17, None, None]
    assert "last layer must use full_attention" in " ".join(account(TEXT).warnings)


def test_shared_kv_layers_hold_no_k_v_projections_and_a_double_wide_mlp():
    # Layers 4–6 (the last num_kv_shared_layers = 3) reuse layer 3's (sliding) and layer 2's (global) keys and
    # values: q and o only, a q_norm, and with use_double_wide_mlp an MLP of 2 · 96. H 64, 4 heads of 16 (32 global).
    report = account(TEXT)
    shared_sliding = group(report, 4)
    assert shared_sliding.components.attention == 64 * 4 * 16 * 2
    assert shared_sliding.components.ffn == 3 * 64 * 2 * 96
    own_sliding = group(report, 3)
    assert own_sliding.components.attention == 64 * 4 * 16 * 2 + 2 * 64 * 2 * 16
    assert own_sliding.components.ffn == 3 * 64 * 96
    names = checkpoint_tensors(load_config(TEXT).spec)
    assert "model.layers.3.self_attn.k_proj.weight" in names
    assert not any(name.startswith("model.layers.4.self_attn.k_") for name in names)


def test_shared_kv_layers_cache_nothing_but_still_attend():
    # Cache at context 64 (BF16): layers 0, 1, 3 slide (17 tokens × 2 · 2 heads · 16), layer 2 is global
    # (64 tokens × 2 · 2 · 32); layers 4–6 read those caches.
    assert memory(TEXT, 64).kv_cache.bytes == (3 * 17 * 2 * 2 * 16 + 64 * 2 * 2 * 32) * 2 == 22_912
    # Scores per key, every layer: 2 · 4 heads · (16 + 16) sliding (layers 0, 1, 3, 4), 2 · 4 · (32 + 32) global
    # (2, 5, 6); at context 16, within every window.
    assert flops(TEXT, 16).per_token.attention_scores == 16 * (4 * 256 + 3 * 512)


def test_per_layer_embeddings_are_a_lookup_and_two_projections_a_layer():
    # embed_tokens_per_layer: 300 rows of 7 layers · 8; per_layer_model_projection 64 → 56 and its RMSNorm of 8;
    # each layer: per_layer_input_gate 64 → 8, per_layer_projection 8 → 64, an RMSNorm of 64.
    report = account(TEXT)
    assert report.components.embedding == 512 * 64 + 300 * 7 * 8
    assert report.components.other == 64 * 56 + 7 * (2 * 64 * 8)
    # FLOPs: the lookup costs none; the projections 2 · (64 · 56 + 7 · 2 · 64 · 8) per token.
    assert flops(TEXT, 1).per_token.other == 2 * (64 * 56 + 7 * 2 * 64 * 8) == 21_504


def test_per_layer_config_says_what_global_head_dim_says(write_config):
    # transformers 5.24 writes the global layers' heads as per_layer_config overrides instead of global_head_dim.
    base = json.loads(Path(GEMMA4_26B).read_text())["text_config"]
    written = {k: v for k, v in base.items() if k not in ("global_head_dim", "num_global_key_value_heads")}
    written["per_layer_config"] = {f"{i:02d}": {"head_dim": 512, "num_key_value_heads": 2} for i in (5, 11, 17, 23, 29)}
    ours, theirs = load_config(GEMMA4_26B), load_config(str(write_config(written)))
    assert checkpoint_tensors(theirs.spec) == {
        name.replace("model.language_model.", "model."): shape
        for name, shape in checkpoint_tensors(ours.spec).items()
        if name.startswith("model.language_model.")  # the wrapper's head, vision tower and projector aside
    }


def test_refuses_what_transformers_refuses(write_config):
    text = json.loads(Path(TEXT).read_text())
    # 7 layers, 6 shared: layer 0 (sliding) is the only one left, and no layer computes the global keys.
    with pytest.raises(InvalidConfigError, match="num_kv_shared_layers"):
        account(str(write_config({**text, "num_kv_shared_layers": 6}, "shared")))
    with pytest.raises(InvalidConfigError, match="num_experts"):
        account(str(write_config({**text, "enable_moe_block": True, "moe_intermediate_size": 8}, "moe")))
    uneven = {**text, "per_layer_config": {"2": {"head_dim": 32}}}  # layers 5 and 6 are global too
    with pytest.raises(InvalidConfigError, match="per_layer_config"):
        account(str(write_config(uneven, "uneven")))


def test_wrapper_counts_the_language_model_and_ties_by_its_own_flag():
    # synthetic__gemma4: text_config says tied, the wrapper says not: an lm_head of 512 × 64 is stored.
    wrapper = str(ROOT / "tests" / "configs" / "synthetic__gemma4.json")
    names = checkpoint_tensors(load_config(wrapper).spec)
    assert names["lm_head.weight"] == (512, 64)
    assert names["model.language_model.embed_tokens_per_layer.weight"] == (300, 7 * 8)
