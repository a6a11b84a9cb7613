"""Gemma 3n: AltUp and LAuReL around Gemma-3's layer, per-layer embeddings, layers that reuse an earlier layer's
keys and values, an FFN width per layer, and activation sparsity (which changes no count).

Every expected figure is derived by hand from the config's numbers.
"""

import json
from pathlib import Path

import pytest

from ffncalc import account, flops, load_config
from ffncalc.api import memory
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
TEXT = str(CONFIGS / "synthetic__gemma3n_text.json")

# Gemma3nTextConfig's defaults (the E4B text model): hidden 2,048, 35 layers, 8 query heads and 2 KV heads of 256,
# FFN 16,384, AltUp over 4 copies, LAuReL rank 64, per-layer inputs of 256, the last 15 layers sharing KV.
H, LAYERS, P, N = 2048, 35, 256, 4
ALTUP = (
    H * N + N * N * N + N * N + H
)  # modality_router, prediction_coefs (n → n²), correction_coefs, correct_output_scale
LAUREL = 2 * H * 64
PER_LAYER_INPUT = 2 * H * P
NORMS = 7 * H  # four sandwich norms, AltUp's router_norm, LAuReL's post norm, post_per_layer_input_norm


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_gemma3n_default_model_by_hand(write_config):
    own_kv = H * (2048 + 512 + 512) + 2048 * H + 2 * 256  # q, k, v, o and q/k norms
    shared_kv = H * 2048 + 2048 * H + 256  # q, o and q_norm: k and v come from an earlier layer
    rest = 3 * H * 16384 + NORMS + ALTUP + LAUREL + PER_LAYER_INPUT
    outside = (
        262400 * H  # embed_tokens (tied)
        + 262144 * LAYERS * P  # embed_tokens_per_layer
        + H * LAYERS * P
        + P  # per_layer_model_projection and its norm
        + 2 * 3 * H * H  # altup_projections and altup_unembed_projections, n − 1 each
        + H  # final norm
    )
    report = account(str(write_config({"model_type": "gemma3n_text"})))
    assert report.total_params == 20 * (own_kv + rest) + 15 * (shared_kv + rest) + outside == 6_835_235_568


def test_shared_kv_layers_cache_nothing(write_config):
    # Layers 0–19 cache: 16 slide (512 tokens), 4 are global (every fifth: 4, 9, 14, 19); 2 heads · (256 + 256)
    # per token; BF16. Layers 20–34 read those caches.
    cache = memory(str(write_config({"model_type": "gemma3n_text"})), "32k").kv_cache
    assert cache.bytes == (16 * 512 + 4 * 32768) * 2 * 512 * 2 == 285_212_672


def test_altup_laurel_and_per_layer_inputs_cost_other_flops(write_config):
    # Weights per layer (2 FLOPs each): AltUp's router, prediction and correction coefficients, LAuReL, the per-layer
    # gate and projection. Beyond its weights AltUp runs its router again to correct (2 · H · n) and mixes its n
    # copies by per-token coefficients (2 · H · n²). Outside the layers: per_layer_model_projection, and the 2 · 3
    # AltUp projections.
    per_layer = 2 * (H * N + N * N * N + N * N + LAUREL + PER_LAYER_INPUT) + 2 * H * N + 2 * H * N * N
    outside = 2 * (H * LAYERS * P + 6 * H * H)
    report = flops(str(write_config({"model_type": "gemma3n_text"})), 1)
    assert report.per_token.other == LAYERS * per_layer + outside == 182_228_448


def test_ffn_width_per_layer():
    # intermediate_size [128, 128, 96, 96, 64, 64], hidden 64: a gated FFN of 3 · 64 · width each.
    report = account(TEXT)
    assert [group(report, i).components.ffn for i in range(6)] == [3 * 64 * w for w in (128, 128, 96, 96, 64, 64)]


def test_activation_sparsity_changes_no_parameter_and_no_flop(write_config):
    config = json.loads(Path(TEXT).read_text())
    dense = {k: v for k, v in config.items() if k != "activation_sparsity_pattern"}
    sparse, plain = str(write_config(config, "sparse")), str(write_config(dense, "dense"))
    assert account(sparse).total_params == account(plain).total_params
    assert flops(sparse, 16).per_token == flops(plain, 16).per_token
    assert any("activation sparsity in 2 layers" in note for note in account(sparse).notes)


def test_shared_layer_is_global_when_the_last_global_layer_came_before():
    # synthetic__gemma3n_text_layer_types: layers 2–4 share (3 of 5); layer 3 is global and reads layer 1's keys
    # and values, layers 2 and 4 slide and read layer 0's. None of 2–4 stores k_proj or v_proj.
    loaded = load_config(str(CONFIGS / "synthetic__gemma3n_text_layer_types.json"))
    names = checkpoint_tensors(loaded.spec)
    assert [f"model.layers.{i}.self_attn.k_proj.weight" in names for i in range(5)] == [True, True, False, False, False]
    assert [layer.attention.window for layer in loaded.spec.layers] == [16, None, 16, None, 16]


def test_refuses_what_transformers_refuses(write_config):
    config = json.loads(Path(TEXT).read_text())
    with pytest.raises(InvalidConfigError, match="intermediate_size"):
        account(str(write_config({**config, "intermediate_size": [64, 64]}, "widths")))
    # Every layer shared leaves no layer to compute keys and values (Gemma 4 allows it; Gemma 3n does not).
    with pytest.raises(InvalidConfigError, match="num_kv_shared_layers"):
        account(str(write_config({**config, "num_kv_shared_layers": 6}, "shared")))


def test_wrapper_counts_the_language_model_and_names_its_default_towers():
    report = account(str(CONFIGS / "synthetic__gemma3n.json"))
    defaults = {d.field: d.value for d in report.defaults_used}
    assert defaults["vision_config"] == "Gemma3nVisionConfig" and defaults["audio_config"] == "Gemma3nAudioConfig"
    names = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__gemma3n.json")).spec)
    # The wrapper's tie_word_embeddings (default true) ties the head, whatever text_config says: no lm_head stored.
    assert "lm_head.weight" not in names
    assert names["model.language_model.altup_unembed_projections.2.weight"] == (64, 64)
