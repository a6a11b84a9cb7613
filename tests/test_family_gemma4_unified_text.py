"""Gemma 4 unified's text model: Gemma 4's layers without per-layer embeddings or the MoE block.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__gemma4_unified_text.json, synthetic__gemma4_unified_text*.json).
"""

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__gemma4_unified_text.json")


def test_gemma4_unified_text_default_model_by_hand(write_config):
    # Gemma4UnifiedTextConfig(): H 2,304, 30 layers of 8 heads and 4 KV heads of 256; every sixth layer (5 of them)
    # global with heads of 512; a gated MLP of 9,216; four RMSNorms a layer, q and k norms of the head width; the
    # table 262,144 × 2,304 tied; no per-layer embeddings, no experts.
    hidden = 2304

    def attention(head):
        return 2 * hidden * 8 * head + 2 * hidden * 4 * head + 2 * head

    layers = 25 * attention(256) + 5 * attention(512) + 30 * (3 * hidden * 9216 + 4 * hidden)
    total = layers + 262144 * hidden + hidden
    assert total == 3_010_758_400
    assert account(str(write_config({"model_type": "gemma4_unified_text"}))).total_params == total


def test_kv_shared_layers_have_no_key_or_value_projection_and_a_double_wide_mlp():
    # the last 3 of 7 layers reuse keys and values; use_double_wide_mlp doubles their MLP (96 → 192)
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert "model.layers.3.self_attn.k_proj.weight" in tensors
    assert "model.layers.4.self_attn.k_proj.weight" not in tensors
    assert tensors["model.layers.3.mlp.up_proj.weight"] == (96, 64)
    assert tensors["model.layers.4.mlp.up_proj.weight"] == (192, 64)
    assert not any("per_layer" in name or "experts" in name for name in tensors)


def test_gemma4_unified_text_sliding_layers_read_their_window():
    # sliding_window 32 (use_bidirectional_attention "vision", its default, keeps the window): at context 64, four
    # sliding layers score 32 keys each with heads of 16, and three global ones (2, 5, and the last, which transformers
    # makes global whatever layer_types says) 64 keys with heads of 32; 4 heads, q·k and p·v
    per_token = flops(SYNTHETIC, 64).per_token
    assert per_token.attention_scores == 4 * 2 * 2 * 4 * 16 * 32 + 3 * 2 * 2 * 4 * 32 * 64
